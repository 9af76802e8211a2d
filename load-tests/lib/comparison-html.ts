// The strategy comparison's section of the HTML report: a chart of what each strategy sold against its
// stock and how it answered, then its results and its latency as tables.
import {
  boundText,
  type ComparisonSpec,
  compareStrategies,
  latencyCells,
  latencyColumns,
  missedRaces,
  RESULT_COLUMNS,
  resultCells,
  type StrategyResult,
} from './comparison.ts';
import { type Cell, esc, tableHtml } from './html-parts.ts';
import { fmtMs } from './summary-data.ts';

const pct = (value: number, max: number): string => `${Math.max(0, Math.min(100, (100 * value) / max)).toFixed(1)}%`;

interface BarRow {
  name: string;
  /** Segments left to right: width in units of the facet's scale, and a class for the colour. */
  segments: Array<{ value: number; className: string }>;
  label: string;
}

/** One facet of the per-strategy chart: a row per strategy, bars on a shared scale, a marker if any. */
function facet(title: string, key: string, rows: BarRow[], marker?: { value: number; label: string }): string {
  const max = Math.max(1, marker?.value ?? 0, ...rows.map((r) => r.segments.reduce((a, s) => a + s.value, 0))) * 1.05;
  const markerHtml = marker ? `<span class="marker" style="left:${pct(marker.value, max)}"></span>` : '';
  const body = rows
    .map(
      (row) =>
        `<div class="bar-row"><span class="name">${esc(row.name)}</span><span class="track">` +
        row.segments
          .filter((s) => s.value > 0)
          .map((s) => `<span class="bar ${s.className}" style="width:${pct(s.value, max)}"></span>`)
          .join('') +
        `${markerHtml}</span><span class="val">${esc(row.label)}</span></div>`,
    )
    .join('');
  const markerNote = marker ? ` <span class="key"><i class="k-marker"></i>${esc(marker.label)}</span>` : '';
  return `<figure class="facet"><figcaption><b>${esc(title)}</b> ${key}${markerNote}</figcaption>${body}</figure>`;
}

const keyOf = (className: string, label: string) =>
  `<span class="key"><i class="${className}"></i>${esc(label)}</span>`;

/** The comparison's picture: units against the stock (oversold in red), refusals, speed at the instant, p95 on the spike. */
function comparisonChart(results: StrategyResult[], spec: ComparisonSpec): string {
  const stock = spec.stock.spike + spec.stock.instant;
  const p95Bound = spec.latencyBounds.find((b) => b.label === 'spike purchase p95')?.below;
  const name = (r: StrategyResult) => (r.unsafe ? `${r.strategy} ⚠` : r.strategy);
  return (
    `<div class="facets">` +
    facet(
      'Units promised',
      keyOf('k-acc', 'accepted') + keyOf('k-over', 'oversold'),
      results.map((r) => ({
        name: name(r),
        segments: [
          { value: Math.min(r.accepted, stock), className: 'acc' },
          { value: r.oversold ?? 0, className: 'over' },
        ],
        label: r.oversold ? `${r.accepted} · ${r.oversold} over` : String(r.accepted),
      })),
      { value: stock, label: `stock ${stock}` },
    ) +
    facet(
      'Refused',
      keyOf('k-ref', '410 sold out, 409 limit'),
      results.map((r) => ({
        name: name(r),
        segments: [{ value: r.refused, className: 'ref' }],
        label: String(r.refused),
      })),
    ) +
    facet(
      'Instant: answers per second',
      keyOf('k-rate', 'the crowd answered ÷ time to its last answer'),
      results.map((r) => ({
        name: name(r),
        segments: [{ value: r.instantPerSecond ?? 0, className: 'rate' }],
        label: r.instantPerSecond === undefined ? '—' : `${Math.round(r.instantPerSecond)}/s`,
      })),
    ) +
    facet(
      'Spike: purchase p95',
      keyOf('k-p95', 'ms'),
      results.map((r) => ({
        name: name(r),
        segments: [{ value: r.spikeP95 ?? 0, className: r.latency.pass ? 'p95' : 'p95 slow' }],
        label: fmtMs(r.spikeP95),
      })),
      p95Bound === undefined ? undefined : { value: p95Bound, label: `bound ${fmtMs(p95Bound)}` },
    ) +
    `</div>`
  );
}

const FINDING_CLASS: Record<StrategyResult['finding'], string> = {
  safe: 'pass',
  oversold: 'unsafe',
  'race-missed': 'missed',
  broken: 'fail',
};

export function comparisonSection(data: K6SummaryData, spec: ComparisonSpec, load: string): string {
  const results = compareStrategies(data, spec);
  const columns = latencyColumns(spec);
  const missed = missedRaces(results);
  const resultRows = results.map((r) => {
    const cells: Array<string | Cell> = resultCells(r);
    cells[1] = { text: cells[1] as string, className: r.oversold ? 'oversold' : '' };
    cells[cells.length - 1] = { text: r.verdict, className: FINDING_CLASS[r.finding] };
    return cells;
  });
  const latencyRows = results.map((r) =>
    latencyCells(r, columns).map((text, i): Cell => ({
      text,
      className:
        i === columns.length + 1
          ? r.latency.pass
            ? 'pass'
            : r.latency.gates
              ? 'fail'
              : 'unsafe'
          : text.endsWith('✗')
            ? 'fail'
            : text.endsWith('⚠')
              ? 'unsafe'
              : '',
    })),
  );
  return `<h2>Per strategy</h2>
${missed.length > 0 ? `<div class="warn">RACE MISSED: ${esc(missed.join(', '))} sold no more than the stock this run — the demonstration missed, not the system (see load-tests/README.md).</div>` : ''}
<p>Load: ${esc(load)}. Oversold units come from each sale's audit; ⚠ marks the strategies that exist to oversell (UNSAFE): their oversold units are the finding, never a failure.</p>
${comparisonChart(results, spec)}
${tableHtml(
  RESULT_COLUMNS.map((label, i) => ({ label, text: i === 0 || i === RESULT_COLUMNS.length - 1 })),
  resultRows,
  true,
)}
<h2>Latency per strategy</h2>
<p>Each measure where it means something: p95 on the spike (arrivals spread over seconds), the last buyer's answer at the instant (everyone arrives at once, so each waits behind the others).</p>
${tableHtml(
  [
    { label: 'strategy', text: true },
    ...columns.map((c) => ({ label: `${c.label} (${boundText(c)})` })),
    { label: 'latency', text: true },
  ],
  latencyRows,
  true,
)}`;
}

/** Where each strategy's turn starts on the time axis (the comparison's schedule), if known. */
