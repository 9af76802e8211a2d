// The text report of a run. Its first lines are what a reader must see first: a rate-limited run (and
// what to start the API with), then the two verdicts and the exit code they make.
import { type ComparisonSpec, comparisonLines } from './comparison.ts';
import type { CommonConfig } from './config.ts';
import { answersByStatus, count, endpointLatencies, fmt, fmtMs, stat, table } from './summary-data.ts';
import {
  type LatencyBound,
  failedChecks,
  failedThresholds,
  signInsLimited,
  type Verdicts,
  type VerdictSpec,
  verdicts,
} from './verdict.ts';

export interface ReportOptions {
  /** File prefix and title, e.g. `flash-sale-burst`. */
  name: string;
  config: Pick<CommonConfig, 'baseUrl' | 'latencyGates' | 'resultsDir'>;
  /** The bounds of the Latency verdict (the same ones the latency thresholds carry when they gate). */
  latencyBounds: LatencyBound[];
  /** One line: how the load was shaped. */
  load: string;
  /** Length of a timeline bucket (lib/timeline.ts), for the HTML report's charts. */
  timelineBucketSeconds: number;
  /** Scenario-specific lines (the sale, the audit), placed after the purchase outcomes. */
  details?: (data: K6SummaryData) => string[];
  /** The strategy comparison: its result and latency per strategy lead both reports (lib/comparison.ts). */
  comparison?: ComparisonSpec;
  /** What the second verdict is called (`Latency`; the waiting room's is `Fairness`: its order and ETAs too). */
  latencyName?: string;
  /** What a scenario adds to a passing verdict's reason. */
  passNotes?: VerdictSpec['passNotes'];
  /** Series sampled over the run (lib/timeline.ts), charted in the HTML report beside requests and latency. */
  sampledCharts?: SampledChart[];
}

/** A chart of series sampled over the run: each `name` of lib/timeline.ts's `declareSampledSeries`. */
export interface SampledChart {
  title: string;
  unit: string;
  series: Array<{ name: string; label: string; color: string }>;
}

/** Both verdicts of a run, as its options judge it. */
export function judge(data: K6SummaryData, options: ReportOptions): Verdicts {
  return verdicts(data, {
    latencyBounds: options.latencyBounds,
    latencyGates: options.config.latencyGates,
    unsafe: options.comparison?.unsafe,
    passNotes: options.passNotes,
  });
}

/** The lines that say a run was refused at sign-in and what to do; empty when it was not. */
export function rateLimitWarning(data: K6SummaryData): string[] {
  const { limited, attempts } = signInsLimited(data);
  if (limited === 0) return [];
  return [
    `!! SIGN-INS RATE-LIMITED: ${limited} of ${attempts} guest sign-ins answered 429 — the API runs with the ` +
      `standard per-IP sign-in limit, and k6 signs every buyer in from one address.`,
    `!! Start the API with RATE_LIMIT_PROFILE=load-test (e.g. \`npm run start:load\`; docs/protection.md) and run again.`,
  ];
}

export function resultLine(v: Verdicts, latencyName = 'Latency'): string {
  if (v.pass) return 'Result:      PASS (k6 exits 0)';
  const why = !v.correctness.pass ? 'correctness failed' : `${latencyName.toLowerCase()} failed and gates`;
  return `Result:      FAIL (k6 exits 99: ${why})`;
}

/** The headline: rate-limit warning, both verdicts, the exit code. */
export function headline(data: K6SummaryData, v: Verdicts, latencyName = 'Latency'): string[] {
  return [
    ...rateLimitWarning(data),
    `Correctness: ${v.correctness.pass ? 'PASS' : 'FAIL'} — ${v.correctness.reason}`,
    `${`${latencyName}:`.padEnd(12)} ${v.latency.pass ? 'PASS' : 'FAIL'} — ${v.latency.reason}`,
    resultLine(v, latencyName),
  ];
}

function purchaseLines(data: K6SummaryData): string[] {
  const outcomes = table([
    ['accepted', 'sold out (410)', 'limit (409)', 'unexpected', 'early retries', 'other calls broken'],
    [
      String(count(data, 'purchase_accepted')),
      String(count(data, 'purchase_sold_out')),
      String(count(data, 'purchase_limit_reached')),
      String(count(data, 'purchase_unexpected')),
      String(count(data, 'purchase_early_retries')),
      String(count(data, 'request_unexpected')),
    ],
  ]);
  const lines = ['Purchases', ...outcomes.map((l) => `  ${l}`)];
  lines.push(
    `  purchase latency: p50 ${fmtMs(stat(data, 'purchase_duration', 'med'))}, ` +
      `p95 ${fmtMs(stat(data, 'purchase_duration', 'p(95)'))}, max ${fmtMs(stat(data, 'purchase_duration', 'max'))}`,
  );
  const retried = count(data, 'purchase_retried_later');
  if (retried > 0) {
    lines.push(
      `  ${retried} "retry later" answer(s) (429/503 + retry-after) waited out and sent again; ` +
        `${count(data, 'purchase_gave_up')} buyer(s) gave up`,
    );
  }
  const late = count(data, 'buyers_late');
  if (late > 0) lines.push(`  ${late} buyer(s) were not ready when the sale opened (raise START_DELAY)`);
  const dropped = count(data, 'dropped_iterations');
  if (dropped > 0) {
    lines.push(
      `  ${dropped} arrival(s) dropped: k6 ran out of VUs because answers were slow (the API did not keep up)`,
    );
  }
  return lines;
}

export function endpointLines(data: K6SummaryData): string[] {
  const rows = endpointLatencies(data);
  if (rows.length === 0) return [];
  return [
    'Latency per endpoint',
    ...table([
      ['endpoint', 'requests', 'p50', 'p95', 'p99', 'max'],
      ...rows.map((r) => [r.endpoint, String(r.requests), fmtMs(r.p50), fmtMs(r.p95), fmtMs(r.p99), fmtMs(r.max)]),
    ]).map((l) => `  ${l}`),
    `Answers by status: ${answersByStatus(data)
      .map((a) => `${a.status === '0' ? 'no answer' : a.status} × ${a.count}`)
      .join(', ')}`,
  ];
}

export function buildReport(data: K6SummaryData, options: ReportOptions, startedAt: Date): string {
  const v = judge(data, options);
  const failed = failedThresholds(data);
  const checks = failedChecks(data);
  const lines = [
    '='.repeat(100),
    `${options.name} against ${options.config.baseUrl} — ${startedAt.toISOString().replace('T', ' ').slice(0, 19)} UTC, ` +
      `${(data.state.testRunDurationMs / 1000).toFixed(1)} s`,
    ...headline(data, v, options.latencyName),
    '-'.repeat(100),
    `Load: ${options.load}`,
    ...(options.comparison ? comparisonLines(data, options.comparison) : []),
    ...purchaseLines(data),
    ...(options.details ? options.details(data) : []),
    ...endpointLines(data),
    ...(failed.length > 0 ? ['Thresholds crossed:', ...failed.map(([m, e]) => `  ✗ ${m}: ${e}`)] : []),
    ...(checks.length > 0 ? ['Failed checks:', ...checks.map((c) => `  ✗ ${c}`)] : []),
    '='.repeat(100),
  ];
  return lines.join('\n');
}

function metricValues(metric: K6SummaryMetric, trendStats: string[]): string {
  const v = metric.values;
  const time = metric.contains === 'time';
  const show = (value: number | undefined) => (value === undefined ? '—' : time ? fmtMs(value) : fmt(value));
  switch (metric.type) {
    case 'counter':
      return `${fmt(v['count'])} (${fmt(v['rate'])}/s)`;
    case 'gauge':
      return `${show(v['value'])} (min ${show(v['min'])}, max ${show(v['max'])})`;
    case 'rate':
      return `${fmt((v['rate'] ?? 0) * 100)} % (${fmt(v['passes'])} ✓ / ${fmt(v['fails'])} ✗)`;
    case 'trend':
      return trendStats.map((name) => `${name}=${show(v[name])}`).join(' ');
  }
}

/** Every metric but the timeline buckets, one line each, then the checks: k6's own summary, in plain text. */
export function metricsSummary(data: K6SummaryData): string[] {
  const names = Object.keys(data.metrics)
    .filter((name) => !name.startsWith('timeline_'))
    .sort();
  const rows = names.map((name) => {
    const metric = data.metrics[name] as K6SummaryMetric;
    const thresholds = Object.values(metric.thresholds ?? {});
    const mark = thresholds.length === 0 ? ' ' : thresholds.every((t) => t.ok) ? '✓' : '✗';
    return [`${mark} ${name}`, metricValues(metric, data.options.summaryTrendStats)];
  });
  const lines = ['Metrics (✓/✗: its thresholds held or not)', ...table(rows).map((line) => `  ${line}`)];
  const checks: string[] = [];
  const visit = (group: K6SummaryGroup): void => {
    for (const c of group.checks) checks.push(`  ${c.fails === 0 ? '✓' : '✗'} ${c.name}: ${c.passes} ✓ / ${c.fails} ✗`);
    for (const g of group.groups) visit(g);
  };
  visit(data.root_group);
  if (checks.length > 0) lines.push('Checks', ...checks);
  return lines;
}
