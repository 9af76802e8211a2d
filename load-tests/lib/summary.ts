// The shared end-of-test report: `handleSummary` writes `<RESULTS_DIR>/<scenario>-summary.json` (k6's
// raw summary data), `<RESULTS_DIR>/<scenario>-report.txt` (readable) and prints the same report.
// Everything is formatted here, with no remote module: k6 fetches `https://` imports at start, and a
// machine without internet (a lab, CI behind a firewall) would fail every scenario before its first request.
import type { CommonConfig } from './config.ts';

/** A value of the summary, e.g. `stat(data, 'purchase_accepted', 'count')`; undefined if absent. */
export function stat(data: K6SummaryData, metric: string, value: string): number | undefined {
  const found = data.metrics[metric]?.values[value];
  return typeof found === 'number' && Number.isFinite(found) ? found : undefined;
}

export function count(data: K6SummaryData, metric: string): number {
  return stat(data, metric, 'count') ?? 0;
}

export function fmtMs(value: number | undefined): string {
  return value === undefined ? '—' : `${value.toFixed(value < 10 ? 1 : 0)} ms`;
}

export function fmt(value: number | undefined): string {
  return value === undefined ? '—' : String(Math.round(value * 100) / 100);
}

/** Thresholds that failed, as `metric: expression`. */
export function failedThresholds(data: K6SummaryData): string[] {
  const failed: string[] = [];
  for (const [name, metric] of Object.entries(data.metrics)) {
    for (const [source, result] of Object.entries(metric.thresholds ?? {})) {
      if (!result.ok) failed.push(`${name}: ${source}`);
    }
  }
  return failed.sort();
}

/** Checks with failures, as `name (passes ✓ / fails ✗)`, from every group. */
export function failedChecks(data: K6SummaryData): string[] {
  const failed: string[] = [];
  const visit = (group: K6SummaryGroup): void => {
    for (const c of group.checks) if (c.fails > 0) failed.push(`${c.name} (${c.passes} ✓ / ${c.fails} ✗)`);
    for (const g of group.groups) visit(g);
  };
  visit(data.root_group);
  return failed;
}

/** Left-aligned columns, for small tables in the report. */
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

/**
 * Every metric, one line each (sub-metrics under their metric), then the checks: the facts of k6's
 * own end-of-test summary, in plain text.
 */
export function metricsSummary(data: K6SummaryData): string[] {
  const names = Object.keys(data.metrics).sort();
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

/** The lines every report starts with: purchase outcomes, latency, audit, failed thresholds. */
function commonLines(data: K6SummaryData, scenarios: string[]): string[] {
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
  for (const scenario of scenarios) {
    const p95 = stat(data, `http_req_duration{scenario:${scenario}}`, 'p(95)');
    if (p95 !== undefined) lines.push(`  every request of scenario ${scenario}: p95 ${fmtMs(p95)}`);
  }
  const late = count(data, 'buyers_late');
  if (late > 0) lines.push(`  ${late} buyer(s) were not ready when the sale opened (raise START_DELAY)`);
  return lines;
}

export interface SummaryOptions {
  /** File prefix and title, e.g. `flash-sale-burst`. */
  name: string;
  /** The k6 scenarios whose `http_req_duration{scenario:…}` p95 is shown (each needs a threshold on it). */
  scenarios: string[];
  config: CommonConfig;
  /** Scenario-specific lines, placed after the purchase outcomes. */
  details?: (data: K6SummaryData) => string[];
}

export function buildReport(data: K6SummaryData, options: SummaryOptions): string {
  const failed = failedThresholds(data);
  const checks = failedChecks(data);
  // No sale was created, so nothing was tested: whatever the thresholds say, that is not a pass.
  const setupFailed = count(data, 'setup_completed') === 0;
  const verdict = setupFailed
    ? 'VERDICT: FAIL (setup did not complete: see the error above; nothing was tested)'
    : failed.length === 0
      ? 'VERDICT: PASS (every threshold held)'
      : `VERDICT: FAIL (${failed.length} threshold(s) crossed)`;
  const lines = [
    '='.repeat(100),
    `${options.name} — flash-sale load test against ${options.config.baseUrl}`,
    `run time ${(data.state.testRunDurationMs / 1000).toFixed(1)} s`,
    '',
    ...commonLines(data, options.scenarios),
    '',
    ...(options.details ? [...options.details(data), ''] : []),
    verdict,
    ...failed.map((f) => `  ✗ ${f}`),
    ...(checks.length > 0 ? ['Failed checks:', ...checks.map((c) => `  ✗ ${c}`)] : []),
    '='.repeat(100),
  ];
  return lines.join('\n');
}

/** A `handleSummary` for a scenario file: `export const handleSummary = summaryHandler({...})`. */
export function summaryHandler(options: SummaryOptions): (data: K6SummaryData) => Record<string, string> {
  return (data) => {
    const report = buildReport(data, options);
    const metrics = metricsSummary(data).join('\n');
    const dir = options.config.resultsDir;
    return {
      stdout: `${metrics}\n\n${report}\n`,
      [`${dir}/${options.name}-summary.json`]: JSON.stringify(data, null, 2),
      [`${dir}/${options.name}-report.txt`]: `${report}\n\n${metrics}\n`,
    };
  };
}
