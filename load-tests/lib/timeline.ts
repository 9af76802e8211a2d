// Requests per second and latency percentiles over time, for the HTML report. k6's end-of-test data
// has only whole-run aggregates, so the run is cut into buckets and each bucket gets its own Trend
// (`timeline_000`, `timeline_001`, …): its count is the requests of that bucket, its percentiles their
// latency. Trends must be created in the init context, so a scenario declares its length up front.
// For a finer, live view use k6's web dashboard or `--out json` (load-tests/README.md "Results").
import { Gauge, Trend } from 'k6/metrics';

const MAX_BUCKETS = 120;

let trends: Trend[] = [];
/** Sampled values per bucket (`timeline_<series>_NNN` gauges: the last sample of each bucket). */
const sampled: Record<string, Gauge[]> = {};
let bucketMs = 1000;
let originMs = 0;

/**
 * Declares the timeline of a run that lasts about `seconds` (the load, its grace period, some slack):
 * at most MAX_BUCKETS buckets of whole seconds. Returns the bucket length, which the report needs.
 */
export function declareTimeline(seconds: number): number {
  const bucketSeconds = Math.max(1, Math.ceil(seconds / MAX_BUCKETS));
  const buckets = Math.ceil(seconds / bucketSeconds) + 1;
  bucketMs = bucketSeconds * 1000;
  trends = Array.from({ length: buckets }, (_, i) => new Trend(`timeline_${String(i).padStart(3, '0')}`, true));
  return bucketSeconds;
}

/** Sets the instant the timeline counts from (setup's end, carried in the setup data to every VU). */
export function startTimelineAt(epochMs: number): void {
  originMs = epochMs;
}

/** Records one request's latency in the bucket of now; requests past the declared length go in the last. */
export function recordTimeline(durationMs: number): void {
  if (originMs === 0 || trends.length === 0) return;
  const index = Math.min(trends.length - 1, Math.max(0, Math.floor((Date.now() - originMs) / bucketMs)));
  trends[index]?.add(durationMs);
}

/**
 * Declares series sampled over the run — a value read now and then (e.g. the waiting room's queue
 * length, once a second) — on the timeline's buckets: call after declareTimeline. Each bucket keeps its
 * last sample; summary-data.ts's `sampledTimeline` reads them back.
 */
export function declareSampledSeries(names: readonly string[]): void {
  for (const name of names) {
    sampled[name] = trends.map((_, i) => new Gauge(`timeline_${name}_${String(i).padStart(3, '0')}`));
  }
}

/** Records a sample of `name` in the bucket of `atMs` (now by default). */
export function recordSample(name: string, value: number, atMs = Date.now()): void {
  const gauges = sampled[name];
  if (originMs === 0 || !gauges || gauges.length === 0) return;
  const index = Math.min(gauges.length - 1, Math.max(0, Math.floor((atMs - originMs) / bucketMs)));
  gauges[index]?.add(value);
}
