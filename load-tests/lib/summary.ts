// The shared `handleSummary`: per run, three files named after the scenario and the run's start time
// (`<RESULTS_DIR>/<scenario>-<YYYY-MM-DDTHH-MM-SS>.txt|.json|.html`), and the text report on stdout.
// Everything is formatted here, with no remote module: k6 fetches `https://` imports at start, and a
// machine without internet (a lab, CI behind a firewall) would fail every scenario before its first request.
import { buildHtmlReport } from './report-html.ts';
import { buildReport, judge, metricsSummary, type ReportOptions } from './report.ts';

export type { ReportOptions } from './report.ts';
export { count, fmt, fmtMs, stat, table } from './summary-data.ts';

/** `2026-11-25T10-40-29`: sorts by time, and is a valid file name everywhere. */
export function fileStamp(date: Date): string {
  return date.toISOString().slice(0, 19).replace(/:/g, '-');
}

/** A `handleSummary` for a scenario file: `export const handleSummary = summaryHandler({...})`. */
export function summaryHandler(options: ReportOptions): (data: K6SummaryData) => Record<string, string> {
  return (data) => {
    const startedAt = new Date(Date.now() - data.state.testRunDurationMs);
    const report = buildReport(data, options, startedAt);
    const metrics = metricsSummary(data).join('\n');
    const base = `${options.config.resultsDir}/${options.name}-${fileStamp(startedAt)}`;
    const judged = judge(data, options);
    return {
      stdout: `${metrics}\n\n${report}\nFiles: ${base}.txt, .json, .html\n`,
      [`${base}.txt`]: `${report}\n\n${metrics}\n`,
      [`${base}.json`]: JSON.stringify({ verdicts: judged, ...data }, null, 2),
      [`${base}.html`]: buildHtmlReport(data, options, startedAt),
    };
  };
}
