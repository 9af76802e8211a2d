/**
 * bench/results/latest.svg: a hand-written SVG (no charting library in node_modules), and latest.png
 * from it when a converter is installed.
 */
import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { percent, thousands, times } from '../format.mjs';
import { TARGETS } from './targets.mjs';

const COLORS = {
  ceiling: '#8a8f98',
  endpoint: '#3b7dd8',
  strategy: '#2e9d5b',
  unsafe: '#d64541',
  drain: '#8e5bd8',
  reference: '#444',
  target: '#d68a00',
};
const WIDTH = 980;
const MARGIN = 20;

function escapeXml(text) {
  return String(text).replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c],
  );
}

/** One panel of horizontal bars with optional vertical reference lines; returns its SVG and height. */
function barPanel({ x, y, width, title, subtitle, rows, references = [], format }) {
  const labelWidth = 270;
  const valueRoom = 240;
  const rowHeight = 26;
  const top = y + (subtitle ? 44 : 30);
  const plotWidth = width - labelWidth - valueRoom;
  const max = Math.max(1, ...rows.map((row) => row.value ?? 0), ...references.map((ref) => ref.value ?? 0)) * 1.05;
  const scale = (value) => (Math.max(0, value ?? 0) / max) * plotWidth;
  const parts = [
    `<text x="${x}" y="${y + 16}" class="title">${escapeXml(title)}</text>`,
    subtitle ? `<text x="${x}" y="${y + 33}" class="note">${escapeXml(subtitle)}</text>` : '',
  ];
  const plotX = x + labelWidth;
  const bottom = top + rows.length * rowHeight;
  // Reference lines first, so bars and (haloed) value labels are drawn over them.
  references.forEach((ref, i) => {
    if (ref.value === null || ref.value === undefined) return;
    const refX = (plotX + scale(ref.value)).toFixed(1);
    parts.push(
      `<line x1="${refX}" y1="${top - 4}" x2="${refX}" y2="${bottom + 4}" stroke="${ref.color}" stroke-width="1.5" stroke-dasharray="5,3"/>`,
      `<text x="${refX}" y="${bottom + 16 + i * 13}" class="ref" fill="${ref.color}" text-anchor="middle">${escapeXml(ref.label)}</text>`,
    );
  });
  rows.forEach((row, i) => {
    const rowY = top + i * rowHeight;
    const barWidth = scale(row.value);
    const value = row.value === null || row.value === undefined ? 'n/a' : format(row.value);
    parts.push(
      `<text x="${plotX - 8}" y="${rowY + 17}" class="label" text-anchor="end"${row.bold ? ' font-weight="bold"' : ''}>${escapeXml(row.label)}</text>`,
      `<rect x="${plotX}" y="${rowY + 4}" width="${Math.max(row.value ? 1 : 0, barWidth).toFixed(1)}" height="${rowHeight - 8}" fill="${row.color}"/>`,
      `<text x="${(plotX + barWidth + 6).toFixed(1)}" y="${rowY + 17}" class="value" stroke="#fff" stroke-width="3" ` +
        `stroke-linejoin="round" paint-order="stroke">${escapeXml(value)}${row.note ? ` · ${escapeXml(row.note)}` : ''}</text>`,
    );
  });
  parts.push(`<line x1="${plotX}" y1="${top}" x2="${plotX}" y2="${bottom}" stroke="#999"/>`);
  return { svg: parts.join('\n'), height: bottom - y + 18 + references.length * 13 };
}

/** The whole chart: one panel per question, stacked. */
export function renderChart(r) {
  const panels = [];
  let y = 50;
  for (const options of [throughputPanel(r), latencyPanel(r), oversoldPanel(r), drainPanel(r), idlePanel(r)]) {
    const panel = barPanel({ x: MARGIN, y, width: WIDTH - 2 * MARGIN, ...options });
    panels.push(panel.svg);
    y += panel.height + 22;
  }
  const height = y + 10;
  const header =
    `Flash-sale purchase benchmark · ${r.finishedAt} · ${r.machine.cpuModel} × ${r.machine.cpuCount} · ` +
    `commit ${r.app.commit} · other processes ${r.noise.otherProcessesPercentOfOneCore.mean} % of a core` +
    (r.noise.noisy ? ' (noisy run)' : '');
  const svg = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="Helvetica, Arial, sans-serif">`,
    '<style>.title{font-size:15px;font-weight:bold;fill:#222}.label{font-size:12px;fill:#222}.value{font-size:11px;fill:#333}.note{font-size:11px;fill:#666}.ref{font-size:10px}</style>',
    `<rect width="${WIDTH}" height="${height}" fill="#fff"/>`,
    `<text x="${MARGIN}" y="28" font-size="13" fill="#444">${escapeXml(header)}</text>`,
    ...panels,
    '</svg>',
  ].join('\n');
  return { svg: `${svg}\n`, width: WIDTH, height };
}

/** A scenario's or strategy's bar: its label and colour. */
function rowOf(s) {
  if (s.key === 'ceiling') return { label: 'ceiling (bare Fastify + script)', color: COLORS.ceiling };
  if (s.key === 'live') return { label: 'live sale, 202', color: COLORS.endpoint };
  if (s.key === 'soldOut') return { label: 'sold-out sale, 410', color: COLORS.endpoint };
  if (s.key === 'soldOutFlood') return { label: `sold-out sale, 410, ${s.connections} conn.`, color: COLORS.endpoint };
  if (s.key === 'returningBuyers') return { label: 'sold-out sale, its buyers back, 409', color: COLORS.endpoint };
  if (s.key === 'fill') return { label: 'purchase, worker stopped', color: COLORS.endpoint };
  if (s.key === 'roomJoin') return { label: 'waiting room: join', color: COLORS.endpoint };
  if (s.key === 'roomPoll') return { label: 'waiting room: poll', color: COLORS.endpoint };
  return {
    label: `strategy ${s.strategy}${s.unsafe ? ' (UNSAFE)' : ''}`,
    color: s.unsafe ? COLORS.unsafe : COLORS.strategy,
    bold: s.unsafe,
  };
}

function throughputPanel(r) {
  const ceiling = r.ceilingReqPerSec;
  return {
    title: 'Throughput (req/s)',
    subtitle:
      `${r.settings.connections} connections · grey: ceiling · blue: purchase endpoint · green: strategies ` +
      `(${r.settings.strategyBuyers} buyers each on stock ${r.settings.strategyStock}) · red: UNSAFE`,
    rows: [...r.scenarios, ...r.strategies].map((s) => ({
      ...rowOf(s),
      value: s.reqPerSec,
      note: s.key === 'ceiling' ? '100 %' : `${percent(s.vsCeiling)} of ceiling`,
    })),
    references: [
      { value: ceiling, label: `ceiling ${thousands(ceiling)}`, color: COLORS.reference },
      {
        value: ceiling * TARGETS.liveVsCeiling,
        label: `live target ${percent(TARGETS.liveVsCeiling)}`,
        color: COLORS.target,
      },
      {
        value: ceiling * TARGETS.soldOutVsCeiling,
        label: `sold-out target ${percent(TARGETS.soldOutVsCeiling)}`,
        color: COLORS.target,
      },
    ],
    format: thousands,
  };
}

function latencyPanel(r) {
  return {
    title: 'Latency p99 (ms)',
    subtitle: 'p50 / p95 in the value label',
    rows: [...r.scenarios, ...r.strategies].map((s) => ({
      ...rowOf(s),
      value: s.latencyMs.p99,
      note: `p50 ${s.latencyMs.p50} · p95 ${s.latencyMs.p95}`,
    })),
    references: [
      {
        value: r.scenarios.find((s) => s.key === 'ceiling').latencyMs.p99 * TARGETS.liveP99VsCeiling,
        label: `live target ${times(TARGETS.liveP99VsCeiling)} the ceiling's`,
        color: COLORS.target,
      },
    ],
    format: (v) => `${v} ms`,
  };
}

function oversoldPanel(r) {
  return {
    title: 'Units oversold, from the audit (same stock, same load)',
    rows: r.strategies.map((s) => ({
      ...rowOf(s),
      value: s.audit.oversold,
      note: `${s.audit.held} held of ${s.stock}`,
    })),
    format: (v) => `${thousands(v)}`,
  };
}

function drainPanel(r) {
  return {
    title: 'Drain into MySQL (orders/s)',
    rows: [
      { label: `${r.drain.rows} unwritten orders, fresh worker`, color: COLORS.drain, value: r.drain.ordersPerSec },
    ],
    references: [
      {
        value: r.settings.drainBaseline,
        label: `previous build ${thousands(r.settings.drainBaseline)}`,
        color: COLORS.reference,
      },
      {
        value: r.settings.drainBaseline * TARGETS.drainVsBaseline,
        label: `target ${times(TARGETS.drainVsBaseline)}`,
        color: COLORS.target,
      },
    ],
    format: thousands,
  };
}

function idlePanel(r) {
  return {
    title: `Idle, ${r.idle.sales} live sold-out sales, no load (% of one core)`,
    subtitle: `over ${r.idle.durationS} s; Redis and MariaDB are shared servers: other clients count too`,
    rows: [
      { label: 'worker', color: COLORS.drain, value: r.idle.cpu.worker, bold: true },
      { label: 'API', color: COLORS.endpoint, value: r.idle.cpu.api },
      { label: 'Redis', color: COLORS.ceiling, value: r.idle.cpu.redis },
      { label: 'MariaDB', color: COLORS.ceiling, value: r.idle.cpu.mysql },
    ],
    references: [
      {
        value: TARGETS.idleWorkerPercentOfCore,
        label: `worker target < ${TARGETS.idleWorkerPercentOfCore} %`,
        color: COLORS.target,
      },
    ],
    format: (v) => `${v} %`,
  };
}

/** latest.png from latest.svg with rsvg-convert or a headless Chromium, if either is installed; else none. */
export function writePng(svgPath, { width, height }) {
  const pngPath = svgPath.replace(/\.svg$/, '.png');
  rmSync(pngPath, { force: true }); // never leave a stale PNG next to a new SVG
  const attempts = [
    ['rsvg-convert', ['-o', pngPath, svgPath]],
    ...['chromium', 'chromium-browser', 'google-chrome'].map((browser) => [
      browser,
      [
        '--headless',
        '--disable-gpu',
        '--no-sandbox',
        `--screenshot=${pngPath}`,
        `--window-size=${width},${height}`,
        `file://${svgPath}`,
      ],
    ]),
  ];
  for (const [command, args] of attempts) {
    const result = spawnSync(command, args, { stdio: 'ignore', timeout: 30_000 });
    if (result.error?.code === 'ENOENT') continue;
    if (result.status === 0 && existsSync(pngPath)) return path.basename(pngPath);
  }
  return null;
}
