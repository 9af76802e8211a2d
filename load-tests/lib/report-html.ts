// The HTML report: one self-contained page (inline CSS and SVG, no script, nothing fetched), so it opens
// from a results folder on a machine without internet and can be attached to a ticket as it is. It reads
// on a laptop and on a phone alike: tables become one card per row on a narrow screen, each chart has a
// drawing for either width, and the text report and the metrics (fixed-width lines) fold away.
import type { ComparisonSpec } from './comparison.ts';
import { comparisonSection } from './comparison-html.ts';
import { esc, tableHtml } from './html-parts.ts';
import { buildReport, headline, judge, metricsSummary, type ReportOptions, type SampledChart } from './report.ts';
import {
  answersByStatus,
  endpointLatencies,
  fmt,
  fmtMs,
  sampledTimeline,
  type TimelinePoint,
  timeline,
} from './summary-data.ts';

interface Series {
  name: string;
  color: string;
  values: Array<number | undefined>;
}

/** A moment of the run marked on the time axis, e.g. where a strategy's turn starts. */
export interface TimeMark {
  at: number;
  label: string;
}

/** One drawing of a line chart, `width` × `height` units, with `marks` as numbered dashed lines. */
function lineSvg(
  title: string,
  xs: number[],
  series: Series[],
  size: { width: number; height: number; className: string },
  marks: readonly TimeMark[],
) {
  const { width, height, className } = size;
  const left = 48;
  const bottom = 24;
  const top = marks.length > 0 ? 22 : 10;
  const right = 16;
  const all = series.flatMap((s) => s.values.filter((v): v is number => v !== undefined));
  const maxY = Math.max(1, ...all) * 1.1;
  const maxX = Math.max(1, ...xs, ...marks.map((m) => m.at));
  const x = (value: number) => left + ((width - left - right) * value) / maxX;
  const y = (value: number) => top + (height - top - bottom) * (1 - value / maxY);
  const paths = series.map((s) => {
    let d = '';
    s.values.forEach((v, i) => {
      if (v === undefined) return;
      d += `${d === '' || s.values[i - 1] === undefined ? 'M' : 'L'}${x(xs[i] ?? 0).toFixed(1)},${y(v).toFixed(1)} `;
    });
    return `<path d="${d.trim()}" fill="none" stroke="${s.color}" stroke-width="2"/>`;
  });
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) => {
    const value = maxY * f;
    return (
      `<line x1="${left}" x2="${width - right}" y1="${y(value).toFixed(1)}" y2="${y(value).toFixed(1)}" stroke="#eee"/>` +
      `<text x="${left - 6}" y="${(y(value) + 4).toFixed(1)}" text-anchor="end">${Math.round(value)}</text>`
    );
  });
  const xTicks = [0, 0.5, 1].map(
    (f) =>
      `<text x="${x(maxX * f).toFixed(1)}" y="${height - 6}" text-anchor="${f === 0 ? 'start' : f === 1 ? 'end' : 'middle'}">` +
      `${Math.round(maxX * f)} s</text>`,
  );
  const markLines = marks.map(
    (m, i) =>
      `<line x1="${x(m.at).toFixed(1)}" x2="${x(m.at).toFixed(1)}" y1="${top - 8}" y2="${height - bottom}" ` +
      `stroke="#9ca3af" stroke-dasharray="3 3"/>` +
      `<text x="${(x(m.at) + 3).toFixed(1)}" y="${top - 10}" fill="#4b5563">${i + 1}</text>`,
  );
  return (
    `<svg class="${className}" viewBox="0 0 ${width} ${height}" width="100%" role="img" aria-label="${esc(title)}" ` +
    `font-size="11">${ticks.join('')}${xTicks.join('')}${markLines.join('')}${paths.join('')}</svg>`
  );
}

/**
 * A line chart of `series` over `xs` (seconds), as inline SVG with axes and a legend: drawn twice, for a
 * wide and a narrow page (CSS shows one), so its text stays legible on a phone.
 */
export function lineChart(
  title: string,
  unit: string,
  xs: number[],
  series: Series[],
  marks: readonly TimeMark[] = [],
): string {
  const legend = series.map((s) => `<span style="color:${s.color}">■ ${esc(s.name)}</span>`).join(' ');
  const markLegend =
    marks.length > 0
      ? `<br><small>${marks.map((m, i) => `<span class="mark">${i + 1} ${esc(m.label)}</span>`).join(' · ')}</small>`
      : '';
  return (
    `<figure><figcaption>${esc(title)} <small>(${esc(unit)})</small> ${legend}${markLegend}</figcaption>` +
    lineSvg(title, xs, series, { width: 760, height: 240, className: 'wide' }, marks) +
    lineSvg(title, xs, series, { width: 360, height: 220, className: 'narrow' }, marks) +
    `</figure>`
  );
}

function timelineCharts(points: TimelinePoint[], marks: readonly TimeMark[]): string {
  if (points.length === 0) return '<p>No timeline recorded.</p>';
  const xs = points.map((p) => p.at);
  return (
    lineChart(
      'Requests per second',
      'req/s',
      xs,
      [{ name: 'req/s', color: '#2563eb', values: points.map((p) => p.requestsPerSecond) }],
      marks,
    ) +
    lineChart(
      'Latency over time',
      'ms',
      xs,
      [
        { name: 'p50', color: '#16a34a', values: points.map((p) => p.p50) },
        { name: 'p95', color: '#d97706', values: points.map((p) => p.p95) },
        { name: 'p99', color: '#dc2626', values: points.map((p) => p.p99) },
      ],
      marks,
    )
  );
}

/** The charts of series sampled over the run, on the same time axis as the timeline's. */
function sampledCharts(data: K6SummaryData, charts: readonly SampledChart[], bucketSeconds: number): string {
  return charts
    .map((chart) => {
      const series = chart.series.map((s) => ({ ...s, points: sampledTimeline(data, s.name, bucketSeconds) }));
      const length = Math.max(0, ...series.map((s) => s.points.length));
      if (length === 0) return '';
      const xs = Array.from({ length }, (_, i) => i * bucketSeconds);
      return lineChart(
        chart.title,
        chart.unit,
        xs,
        series.map((s) => ({ name: s.label, color: s.color, values: xs.map((_, i) => s.points[i]?.value) })),
        chart.marks ? chart.marks(data) : [],
      );
    })
    .join('');
}

function turns(comparison: ComparisonSpec | undefined): TimeMark[] {
  const startsAt = comparison?.startsAt;
  if (!comparison || !startsAt) return [];
  return comparison.strategies.map((strategy, i) => ({ at: startsAt[i] ?? 0, label: strategy }));
}

const STYLE = `
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;padding:16px 20px 32px;max-width:1040px;color:#111;overflow-wrap:break-word}
h1{font-size:20px;margin:8px 0}h2{font-size:16px;margin-top:28px}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ddd;padding:3px 8px;text-align:right;vertical-align:top}
td:first-child,th:first-child,.text{text-align:left}
td:not(.text):not(:first-child){white-space:nowrap}
.verdicts{width:100%}.verdicts td:not(.text){white-space:nowrap}
.pass{color:#15803d}.fail{color:#b91c1c;font-weight:600}.unsafe{color:#b91c1c}.missed{color:#b45309;font-weight:600}
.oversold{color:#991b1b;background:#fee2e2;font-weight:700}
.warn{background:#fef3c7;border:1px solid #d97706;padding:8px;margin:8px 0}
pre{background:#f6f6f6;padding:8px;overflow-x:auto;font-size:12px}figure{margin:12px 0}
details{margin:12px 0}summary{cursor:pointer;font-weight:600}
svg.narrow{display:none}
.facets{display:grid;grid-template-columns:repeat(auto-fit,minmax(420px,1fr));gap:8px 28px}
.facet figcaption{margin-bottom:4px}
.mark{white-space:nowrap}
.key{white-space:nowrap;margin-left:8px;font-size:12px;color:#444}
.key i{display:inline-block;width:10px;height:10px;margin-right:4px;vertical-align:-1px}
.bar-row{display:grid;grid-template-columns:12.5em 1fr 7.5em;gap:2px 8px;align-items:center;font-size:12px;margin:4px 0}
.bar-row .val{font-variant-numeric:tabular-nums}
.track{position:relative;display:flex;height:14px;background:#f1f5f9}
.bar{display:block;height:100%}
.acc,.k-acc{background:#1d4ed8}.over,.k-over{background:#b91c1c}.ref,.k-ref{background:#9ca3af}
.rate,.k-rate{background:#7c3aed}.p95,.k-p95{background:#d97706}.p95.slow{background:#b91c1c}
.marker{position:absolute;top:-3px;bottom:-3px;border-left:2px dashed #111}
.k-marker{border-left:2px dashed #111;width:0!important}
@media (max-width:700px){
  body{padding:12px 12px 24px}
  svg.wide{display:none}svg.narrow{display:block}
  .facets{grid-template-columns:1fr}
  .bar-row{grid-template-columns:1fr 8.5em}.bar-row .name{grid-column:1/-1}
  table.cards,table.cards tbody,table.cards tr,table.cards td{display:block;width:100%}
  table.cards thead{display:none}
  table.cards tr{border:1px solid #ddd;margin:8px 0}
  table.cards td{border:0;border-top:1px solid #eee;display:flex;justify-content:space-between;gap:12px;text-align:right}
  table.cards td:first-child{border-top:0;font-weight:600}
  table.cards td::before{content:attr(data-label);font-weight:400;color:#555;text-align:left}
}
`;

export function buildHtmlReport(data: K6SummaryData, options: ReportOptions, startedAt: Date): string {
  const v = judge(data, options);
  const badge = (pass: boolean) => `<b class="${pass ? 'pass' : 'fail'}">${pass ? 'PASS' : 'FAIL'}</b>`;
  const top = headline(data, v, options.latencyName).filter((line) => line.startsWith('!!'));
  const endpoints = endpointLatencies(data);
  const statuses = answersByStatus(data);
  const text = buildReport(data, options, startedAt);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(options.name)} — ${esc(startedAt.toISOString())}</title>
<style>${STYLE}</style></head><body>
<h1>${esc(options.name)} against ${esc(options.config.baseUrl)}</h1>
<p>${esc(startedAt.toISOString())} · ${(data.state.testRunDurationMs / 1000).toFixed(1)} s${options.comparison ? '' : ` · ${esc(options.load)}`}</p>
${top.length > 0 ? `<div class="warn">${top.map((l) => esc(l.replace(/^!! /, ''))).join('<br>')}</div>` : ''}
<h2>Verdicts</h2>
<table class="verdicts"><tbody>
<tr><td>Correctness</td><td>${badge(v.correctness.pass)}</td><td class="text">${esc(v.correctness.reason)}</td></tr>
<tr><td>${esc(options.latencyName ?? 'Latency')}</td><td>${badge(v.latency.pass)}</td><td class="text">${esc(v.latency.reason)}</td></tr>
<tr><td>Result</td><td>${badge(v.pass)}</td><td class="text">${v.pass ? 'k6 exits 0' : 'k6 exits 99'}</td></tr>
</tbody></table>
${options.comparison ? comparisonSection(data, options.comparison, options.load) : ''}
<h2>Over time</h2>
${sampledCharts(data, options.sampledCharts ?? [], options.timelineBucketSeconds)}
${timelineCharts(timeline(data, options.timelineBucketSeconds), turns(options.comparison))}
<h2>Answers by status</h2>
${tableHtml(
  ['status', 'answers'],
  statuses.map((s) => [s.status === '0' ? 'no answer (timeout, refused)' : s.status, String(s.count)]),
)}
<h2>Latency per endpoint</h2>
${tableHtml(
  [{ label: 'endpoint', text: true }, 'requests', 'p50', 'p95', 'p99', 'max'],
  endpoints.map((r) => [r.endpoint, fmt(r.requests), fmtMs(r.p50), fmtMs(r.p95), fmtMs(r.p99), fmtMs(r.max)]),
  true,
)}
<details><summary>The text report (as k6 printed it: purchases, audits, thresholds)</summary>
<pre>${esc(text)}</pre></details>
<details><summary>Every metric</summary>
<pre>${esc(metricsSummary(data).join('\n'))}</pre></details>
</body></html>
`;
}
