/**
 * The create-sale section of the report (lib/scenarios/create-sale.mjs), and its own report when it runs
 * alone (`--only create-sale`): bench/results/create-sale.{md,json}.
 */
import { writeSectionReport } from './section-report.mjs';

/** `POST /api/admin/sales` p95 below this, in ms, for every strategy: an absolute target, the admin's wait. */
export const CREATE_SALE_P95_MS = 50;

export function createSaleTargets(r) {
  const rows = r.createSale?.rows;
  if (!rows) return [];
  const slowest = [...rows].sort((a, b) => b.latencyMs.p95 - a.latencyMs.p95)[0];
  return [
    {
      id: 'createSaleP95',
      name: `creating a sale: p95 < ${CREATE_SALE_P95_MS} ms for every strategy`,
      measured: `slowest ${slowest.strategy} p95 ${slowest.latencyMs.p95} ms; ${rows.map((row) => `${row.strategy} ${row.latencyMs.p95}`).join(', ')} ms`,
      value: slowest.latencyMs.p95,
      pass: slowest.latencyMs.p95 < CREATE_SALE_P95_MS,
    },
  ];
}

export function createSaleSection(r) {
  const createSale = r.createSale;
  if (!createSale) return [];
  return [
    `## (i) creating a sale — \`POST /api/admin/sales\`, ${createSale.firstCreations} + ${createSale.count} sales of 100 units per strategy`,
    '',
    `| strategy | first ${createSale.firstCreations}: p50 (ms) | max (ms) | then p50 (ms) | p95 (ms) | max (ms) |`,
    '|---|---:|---:|---:|---:|---:|',
    ...createSale.rows.map(
      (row) =>
        `| ${row.strategy} | ${row.first.p50} | ${row.first.max} | ${row.latencyMs.p50} | ${row.latencyMs.p95} | ${row.latencyMs.max} |`,
    ),
    '',
    "Timed from the admin's side, one creation after another. A redis-lua sale's answer includes opening its " +
      'first incarnation in every bucket and its first lease. The first creations of each strategy are shown ' +
      'apart: on processes that just started they run code and statements nothing has run yet (the opening ' +
      'section measures that cost for purchases); the target is on the creations after them.',
    '',
  ];
}

/** `--only create-sale`: the section alone, printed and written to bench/results/create-sale.{md,json}. */
export function writeCreateSaleReport(results) {
  return writeSectionReport(results, {
    name: 'create-sale',
    title: 'create-sale section',
    targets: createSaleTargets,
    section: createSaleSection,
  });
}
