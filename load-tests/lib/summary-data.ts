// Reading k6's end-of-test data (what `handleSummary(data)` receives): values, the per-endpoint and
// per-status sub-metrics, the timeline buckets. Pure, shared by the text and HTML reports and the verdicts.

/** A value of the summary, e.g. `stat(data, 'purchase_accepted', 'count')`; undefined if absent. */
export function stat(data: K6SummaryData, metric: string, value: string): number | undefined {
  const found = data.metrics[metric]?.values[value];
  return typeof found === 'number' && Number.isFinite(found) ? found : undefined;
}

export function count(data: K6SummaryData, metric: string): number {
  return stat(data, metric, 'count') ?? 0;
}

export function fmtMs(value: number | undefined): string {
  if (value === undefined) return '—';
  return value >= 10_000 ? `${(value / 1000).toFixed(1)} s` : `${value.toFixed(value < 10 ? 1 : 0)} ms`;
}

export function fmt(value: number | undefined): string {
  return value === undefined ? '—' : String(Math.round(value * 100) / 100);
}

/** Left-aligned columns, for small tables in the text report. */
export function table(rows: string[][]): string[] {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows.map((row) =>
    row
      .map((cell, i) => cell.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd(),
  );
}

/** The values of `name{tag:value}` sub-metrics, by tag value (each exists because a threshold names it). */
export function byTag(data: K6SummaryData, name: string, tag: string): Array<[string, K6SummaryMetric]> {
  const prefix = `${name}{${tag}:`;
  return Object.entries(data.metrics)
    .filter(([key]) => key.startsWith(prefix) && key.endsWith('}') && !key.slice(prefix.length).includes(','))
    .map(([key, metric]): [string, K6SummaryMetric] => [key.slice(prefix.length, -1), metric])
    .sort((a, b) => (a[0] < b[0] ? -1 : 1));
}

export interface EndpointLatency {
  endpoint: string;
  requests: number;
  p50?: number;
  p95?: number;
  p99?: number;
  max?: number;
}

/** Latency per endpoint (the `endpoint` tag of lib/api.ts), busiest first; endpoints never called are left out. */
export function endpointLatencies(data: K6SummaryData): EndpointLatency[] {
  return byTag(data, 'http_req_duration', 'endpoint')
    .map(([endpoint, metric]) => ({
      endpoint,
      requests: metric.values['count'] ?? 0,
      p50: metric.values['med'],
      p95: metric.values['p(95)'],
      p99: metric.values['p(99)'],
      max: metric.values['max'],
    }))
    .filter((row) => row.requests > 0)
    .sort((a, b) => b.requests - a.requests);
}

/** HTTP answers by status (0: no answer — a timeout or a refused connection), statuses never seen left out. */
export function answersByStatus(data: K6SummaryData): Array<{ status: string; count: number }> {
  return byTag(data, 'http_reqs', 'status')
    .map(([status, metric]) => ({ status, count: metric.values['count'] ?? 0 }))
    .filter((row) => row.count > 0);
}

export interface TimelinePoint {
  /** Seconds since the load started (start of the bucket). */
  at: number;
  requestsPerSecond: number;
  p50?: number;
  p95?: number;
  p99?: number;
}

/**
 * Requests per second and latency percentiles over time, from the `timeline_NNN` trends (one per
 * bucket of `bucketSeconds`, see lib/timeline.ts). Buckets with no request are points at 0 req/s.
 */
export function timeline(data: K6SummaryData, bucketSeconds: number): TimelinePoint[] {
  const buckets = Object.entries(data.metrics)
    .map(([name, metric]) => ({ match: /^timeline_(\d+)$/.exec(name), metric }))
    .filter((b): b is { match: RegExpExecArray; metric: K6SummaryMetric } => b.match !== null)
    .map((b) => ({ index: Number(b.match[1]), values: b.metric.values }));
  if (buckets.length === 0) return [];
  const last = Math.max(...buckets.map((b) => b.index));
  const points: TimelinePoint[] = [];
  for (let i = 0; i <= last; i++) {
    const values = buckets.find((b) => b.index === i)?.values;
    points.push({
      at: i * bucketSeconds,
      requestsPerSecond: (values?.['count'] ?? 0) / bucketSeconds,
      p50: values?.['med'],
      p95: values?.['p(95)'],
      p99: values?.['p(99)'],
    });
  }
  return points;
}

/** A series sampled over the run (lib/timeline.ts `declareSampledSeries`): one value per bucket, if sampled. */
export function sampledTimeline(
  data: K6SummaryData,
  name: string,
  bucketSeconds: number,
): Array<{ at: number; value?: number }> {
  const pattern = new RegExp(`^timeline_${name}_(\\d+)$`);
  const values = new Map<number, number | undefined>();
  for (const [metric, summary] of Object.entries(data.metrics)) {
    const match = pattern.exec(metric);
    if (match) values.set(Number(match[1]), summary.values['value']);
  }
  if (values.size === 0) return [];
  const last = Math.max(...[...values.entries()].filter(([, v]) => v !== undefined).map(([i]) => i), 0);
  return Array.from({ length: last + 1 }, (_, i) => ({ at: i * bucketSeconds, value: values.get(i) }));
}
