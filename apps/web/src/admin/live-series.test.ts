import { LIVE_SERIES_POINTS, withSample } from './live-series';
import { makeAudit, makeDashboard } from './test-fixtures';

const at = (second: number) => new Date(Date.UTC(2030, 0, 15, 10, 0, second)).toISOString();

describe('withSample', () => {
  it("adds each new sample's backlog, drift and latency, and keeps the series the same for a sample it has", () => {
    const first = makeDashboard({
      sampledAt: at(1),
      handoff: { unwritten: 40, beingWritten: 10, failedJobs: 0 },
      audit: makeAudit({ drift: 2 }),
      reservationLatency: { p50Ms: 0.5, p95Ms: 2, p99Ms: 4, calls: 300, windowSeconds: 10 },
    });
    const second = makeDashboard({ sampledAt: at(2), handoff: { unwritten: 0, beingWritten: 0, failedJobs: 0 } });

    const series = withSample(withSample([], first), second);

    expect(series).toEqual([
      { at: Date.parse(at(1)), backlog: 40, drift: 2, p50Ms: 0.5, p95Ms: 2 },
      // No latency in the sample: a gap in the line, not a zero.
      { at: Date.parse(at(2)), backlog: 0, drift: 0, p50Ms: null, p95Ms: null },
    ]);
    expect(withSample(series, second)).toBe(series);
    expect(withSample(series, first)).toBe(series); // a poll answered late
  });

  it('keeps the last LIVE_SERIES_POINTS samples', () => {
    let series = withSample([], makeDashboard({ sampledAt: at(0) }));
    for (let second = 1; second <= LIVE_SERIES_POINTS + 5; second++) {
      series = withSample(series, makeDashboard({ sampledAt: at(second) }));
    }
    expect(series).toHaveLength(LIVE_SERIES_POINTS);
    expect(series.at(-1)?.at).toBe(Date.parse(at(LIVE_SERIES_POINTS + 5)));
  });
});
