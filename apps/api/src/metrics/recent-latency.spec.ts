import { type HistogramBucket, histogramQuantile, RecentLatency } from './recent-latency';

/** Cumulative buckets at 1, 2 and 4 ms and +Inf, from the calls that fell in each one. */
function buckets(perBucket: [number, number, number, number]): HistogramBucket[] {
  let total = 0;
  return [0.001, 0.002, 0.004, Infinity].map((le, i) => ({ le, count: (total += perBucket[i]!) }));
}

describe('histogramQuantile', () => {
  it("interpolates within the rank's bucket, as Prometheus's histogram_quantile does", () => {
    // 100 calls: 50 under 1 ms, 40 in (1, 2] ms, 10 in (2, 4] ms.
    const calls = buckets([50, 40, 10, 0]);
    expect(histogramQuantile(0.5, calls)).toBeCloseTo(0.001); // the 50th call closes the first bucket
    expect(histogramQuantile(0.25, calls)).toBeCloseTo(0.0005); // from 0 within the first bucket
    expect(histogramQuantile(0.95, calls)).toBeCloseTo(0.003); // half way through (2, 4]
  });

  it('answers the highest finite bound past it, and null without calls', () => {
    expect(histogramQuantile(0.99, buckets([0, 0, 90, 10]))).toBe(0.004);
    expect(histogramQuantile(0.5, buckets([0, 0, 0, 0]))).toBeNull();
  });
});

describe('RecentLatency', () => {
  it('measures only the calls since the oldest reading inside the window', () => {
    const latency = new RecentLatency(10_000);
    expect(latency.read(0, buckets([1_000, 0, 0, 0]))).toBeUndefined(); // nothing to measure from yet
    expect(latency.read(400, buckets([1_000, 0, 0, 0]))).toBeUndefined(); // nor a window of "0 s"

    // 100 slow calls since: the 1,000 fast ones before the first reading are not in the window.
    expect(latency.read(5_000, buckets([1_000, 0, 100, 0]))).toEqual({
      p50Ms: 3,
      p95Ms: 3.9,
      p99Ms: 3.98,
      calls: 100,
      windowSeconds: 5,
    });
    // The first reading has left the window: the one at 5 s is the baseline.
    expect(latency.read(12_000, buckets([1_010, 0, 100, 0]))).toMatchObject({
      p99Ms: 0.99,
      calls: 10,
      windowSeconds: 7,
    });
  });

  it('says so when no call was timed in the window, and starts again after a quiet spell', () => {
    const latency = new RecentLatency(10_000);
    latency.read(0, buckets([5, 0, 0, 0]));
    expect(latency.read(1_000, buckets([5, 0, 0, 0]))).toEqual({
      p50Ms: null,
      p95Ms: null,
      p99Ms: null,
      calls: 0,
      windowSeconds: 1,
    });
    expect(latency.read(60_000, buckets([9, 0, 0, 0]))).toBeUndefined();
  });

  it('keeps no more than a reading a second, however often it is asked', () => {
    const latency = new RecentLatency(10_000);
    latency.read(0, buckets([0, 0, 0, 0]));
    for (let ms = 10; ms < 1_000; ms += 10) latency.read(ms, buckets([ms, 0, 0, 0]));
    latency.read(1_000, buckets([1_000, 0, 0, 0]));
    // The reading at 0 has left the window: the next baseline is the one at 1 s, none of those in between.
    expect(latency.read(10_500, buckets([3_000, 0, 0, 0]))).toMatchObject({ calls: 2_000, windowSeconds: 10 });
  });
});
