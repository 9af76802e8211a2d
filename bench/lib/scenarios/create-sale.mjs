/**
 * (i) Creating a sale: `POST /api/admin/sales` timed from the admin's side, one after another, for every
 * strategy of the contract. A redis-lua sale's answer includes opening its first incarnation in Redis and
 * its first lease; an admin (or a k6 scenario that creates its sales) waits for all of it. The first
 * creations of each strategy are reported apart: on fresh processes they pay for code not yet compiled.
 */
import { performance } from 'node:perf_hooks';
import { require } from '../app-dist.mjs';
import { latencySummary } from '../sampling.mjs';
import { SETTINGS, log } from '../settings.mjs';

export async function runCreateSale(run) {
  const { SALE_STRATEGIES } = require('@flash-sale/contract');
  const count = SETTINGS.createSaleCount;
  const rows = [];
  for (const strategy of SALE_STRATEGIES) {
    // The first creations of a strategy run code (and MySQL statements) nothing has run yet: timed apart.
    const first = [];
    for (let i = 0; i < FIRST_CREATIONS; i++) first.push(await timedCreate(run, strategy, `first ${i}`));
    const times = [];
    for (let i = 0; i < count; i++) times.push(await timedCreate(run, strategy, i));
    const row = { strategy, count, first: latencySummary(first), latencyMs: latencySummary(times) };
    rows.push(row);
    log(
      `create sale ${strategy}: first ${FIRST_CREATIONS} max ${row.first.max} ms; then p50 ${row.latencyMs.p50} ms, ` +
        `p95 ${row.latencyMs.p95} ms`,
    );
  }
  run.results.createSale = { count, firstCreations: FIRST_CREATIONS, rows };
}

/** Creations per strategy timed apart, before the measured ones. */
const FIRST_CREATIONS = 20;

async function timedCreate(run, strategy, label) {
  const started = performance.now();
  await run.sales.create(`bench create ${strategy} ${label}`, 100, strategy);
  return Math.round((performance.now() - started) * 10) / 10;
}
