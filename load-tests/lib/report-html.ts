// The HTML report: one self-contained page (inline CSS and SVG, no script, nothing fetched), so it opens
// from a results folder on a machine without internet and can be attached to a ticket as it is.
import { buildReport, headline, metricsSummary, type ReportOptions } from './report.ts';
import { answersByStatus, endpointLatencies, fmtMs, type TimelinePoint, timeline } from './summary-data.ts';
import { verdicts } from './verdict.ts';

function esc(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

interface Series {
  name: string;
  color: string;
  values: Array<number | undefined>;
}

/** A line chart of `series` over `xs` (seconds), as inline SVG with axes and a legend. */
export function lineChart(title: string, unit: string, xs: number[], series: Series[]): string {
  const width = 760;
  const height = 240;
  const left = 56;
  const bottom = 28;
  const top = 12;
  const right = 24;
  const all = series.flatMap((s) => s.values.filter((v): v is number => v !== undefined));
  const maxY = Math.max(1, ...all) * 1.1;
  const maxX = Math.max(1, ...xs);
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
  const xTicks = [0, 0.25, 0.5, 0.75, 1].map(
    (f) =>
      `<text x="${x(maxX * f).toFixed(1)}" y="${height - 8}" text-anchor="middle">${Math.round(maxX * f)} s</text>`,
  );
  const legend = series.map((s) => `<span style="color:${s.color}">■ ${esc(s.name)}</span>`).join(' ');
  return (
    `<figure><figcaption>${esc(title)} <small>(${esc(unit)})</small> ${legend}</figcaption>` +
    `<svg viewBox="0 0 ${width} ${height}" width="100%" role="img" aria-label="${esc(title)}" font-size="11">` +
    `${ticks.join('')}${xTicks.join('')}${paths.join('')}</svg></figure>`
  );
}

function tableHtml(header: string[], rows: string[][]): string {
  const head = header.map((h) => `<th>${esc(h)}</th>`).join('');
  const body = rows.map((row) => `<tr>${row.map((cell) => `<td>${esc(cell)}</td>`).join('')}</tr>`).join('');
  return `<table><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table>`;
}

function timelineCharts(points: TimelinePoint[]): string {
  if (points.length === 0) return '<p>No timeline recorded.</p>';
  const xs = points.map((p) => p.at);
  return (
    lineChart('Requests per second', 'req/s', xs, [
      { name: 'req/s', color: '#2563eb', values: points.map((p) => p.requestsPerSecond) },
    ]) +
    lineChart('Latency over time', 'ms', xs, [
      { name: 'p50', color: '#16a34a', values: points.map((p) => p.p50) },
      { name: 'p95', color: '#d97706', values: points.map((p) => p.p95) },
      { name: 'p99', color: '#dc2626', values: points.map((p) => p.p99) },
    ])
  );
}

export function buildHtmlReport(data: K6SummaryData, options: ReportOptions, startedAt: Date): string {
  const v = verdicts(data, { latencyBounds: options.latencyBounds, latencyGates: options.config.latencyGates });
  const badge = (pass: boolean) => `<b class="${pass ? 'pass' : 'fail'}">${pass ? 'PASS' : 'FAIL'}</b>`;
  const top = headline(data, v).filter((line) => line.startsWith('!!'));
  const endpoints = endpointLatencies(data);
  const statuses = answersByStatus(data);
  const text = buildReport(data, options, startedAt);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(options.name)} — ${esc(startedAt.toISOString())}</title>
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:820px;color:#111}
h1{font-size:20px}h2{font-size:16px;margin-top:28px}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ddd;padding:3px 8px;text-align:right}
td:first-child,th:first-child{text-align:left}
.pass{color:#15803d}.fail{color:#b91c1c}.warn{background:#fef3c7;border:1px solid #d97706;padding:8px}
pre{background:#f6f6f6;padding:8px;overflow-x:auto;font-size:12px}figure{margin:12px 0}
</style></head><body>
<h1>${esc(options.name)} against ${esc(options.config.baseUrl)}</h1>
<p>${esc(startedAt.toISOString())} · ${(data.state.testRunDurationMs / 1000).toFixed(1)} s · ${esc(options.load)}</p>
${top.length > 0 ? `<div class="warn">${top.map((l) => esc(l.replace(/^!! /, ''))).join('<br>')}</div>` : ''}
<h2>Verdicts</h2>
<table><tbody>
<tr><td>Correctness</td><td>${badge(v.correctness.pass)}</td><td style="text-align:left">${esc(v.correctness.reason)}</td></tr>
<tr><td>Latency</td><td>${badge(v.latency.pass)}</td><td style="text-align:left">${esc(v.latency.reason)}</td></tr>
<tr><td>Result</td><td>${badge(v.pass)}</td><td style="text-align:left">${v.pass ? 'k6 exits 0' : 'k6 exits 99'}</td></tr>
</tbody></table>
<h2>Over time</h2>
${timelineCharts(timeline(data, options.timelineBucketSeconds))}
<h2>Answers by status</h2>
${tableHtml(
  ['status', 'answers'],
  statuses.map((s) => [s.status === '0' ? 'no answer (timeout, refused)' : s.status, String(s.count)]),
)}
<h2>Latency per endpoint</h2>
${tableHtml(
  ['endpoint', 'requests', 'p50', 'p95', 'p99', 'max'],
  endpoints.map((r) => [r.endpoint, String(r.requests), fmtMs(r.p50), fmtMs(r.p95), fmtMs(r.p99), fmtMs(r.max)]),
)}
<h2>Report (purchases, audit, thresholds)</h2>
<pre>${esc(text)}</pre>
<h2>Every metric</h2>
<pre>${esc(metricsSummary(data).join('\n'))}</pre>
</body></html>
`;
}
