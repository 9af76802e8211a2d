/**
 * Whether accepted purchases are written, always read from MySQL (the sales' order rows past QUEUED),
 * never from the queue: how purchases reach the worker (one job per purchase, a per-sale stream…) is
 * the app's business and changes.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { round } from './format.mjs';
import { state } from './stack.mjs';

const DRAIN_POLL_MS = 50;

/** Orders the worker has written for these sales (in `database`, when not the run's main one). */
export async function ordersWritten(saleIds, database) {
  const table = database ? `\`${database}\`.orders` : 'orders';
  const [[row]] = await state.mysql.query(
    `SELECT COUNT(*) AS n FROM ${table} WHERE sale_id IN (?) AND status <> 'QUEUED'`,
    [[saleIds].flat()],
  );
  return Number(row.n);
}

/**
 * Until the worker has written `expected` orders for these sales; says how far behind it was. Another
 * stack than the main one (the scale section's) names its `worker` and its `database`.
 */
export async function waitForOrdersWritten(saleIds, expected, { timeoutMs = 600_000, worker, database } = {}) {
  const startedAt = performance.now();
  const deadline = Date.now() + timeoutMs;
  const writer = () => worker ?? state.worker;
  const writtenAtStart = await ordersWritten(saleIds, database);
  let written = writtenAtStart;
  while (written < expected) {
    if (writer().exitCode !== null)
      throw new Error(`the worker exited with orders unwritten (see ${writer().logPath})`);
    if (Date.now() > deadline)
      throw new Error(`${written} of ${expected} orders written after ${timeoutMs / 1000}s (sales ${saleIds})`);
    await sleep(100);
    written = await ordersWritten(saleIds, database);
  }
  return {
    ordersExpected: expected,
    unwrittenAtWaitStart: expected - writtenAtStart,
    writtenAfterS: round((performance.now() - startedAt) / 1000, 2),
  };
}

/** MariaDB's server-wide transaction counters. */
export async function transactionCounters() {
  const [rows] = await state.mysql.query("SHOW GLOBAL STATUS WHERE Variable_name IN ('Com_commit', 'Com_rollback')");
  return Object.fromEntries(rows.map((row) => [row.Variable_name, Number(row.Value)]));
}

/**
 * Polls the order count: orders/s = rows / (time of the first row → time of the last). Each poll counts
 * only the rows past the highest id it has seen (a range of the primary key): a count of every row of
 * the sale, 50 ms apart, cost MariaDB a few ms a poll as the backlog grew, charged to the drain's
 * MySQL CPU per order. The whole count checks the end (and resumes polling if a transaction with
 * lower ids committed after one the poll already counted).
 */
export async function measureDrain(saleId, expected, workerStartedAt, onFirstRows = () => undefined) {
  let firstAt;
  let count = 0;
  let afterId = await highestOrderId();
  const deadline = Date.now() + 600_000;
  while (count < expected) {
    if (Date.now() > deadline) throw new Error(`drain stalled at ${count} of ${expected} rows`);
    if (state.worker.exitCode !== null)
      throw new Error(`the worker exited during the drain (see ${state.worker.logPath})`);
    const fresh = await ordersWrittenAfter(saleId, afterId);
    count += fresh.rows;
    afterId = fresh.highestId ?? afterId;
    if (count > 0 && firstAt === undefined) {
      firstAt = Date.now();
      onFirstRows(count);
    }
    if (count >= expected || (fresh.rows === 0 && count > 0)) count = await ordersWritten(saleId);
    if (count < expected) await sleep(DRAIN_POLL_MS);
  }
  const lastAt = Date.now();
  const firstToLastS = (lastAt - firstAt) / 1000;
  const rowSpanS = await rowTimestampSpanS(saleId);
  return {
    orders: expected,
    rows: count,
    pollIntervalMs: DRAIN_POLL_MS,
    workerBootToFirstRowS: round((firstAt - workerStartedAt) / 1000),
    firstToLastS: round(firstToLastS),
    workerStartToLastS: round((lastAt - workerStartedAt) / 1000),
    ordersPerSec: round(expected / firstToLastS),
    rowTimestampSpanS: round(rowSpanS),
    ordersPerSecByRowTimestamps: rowSpanS > 0 ? round(expected / rowSpanS) : null,
  };
}

/** The highest order id of the run's database (0 when it has none). */
async function highestOrderId() {
  const [[row]] = await state.mysql.query('SELECT COALESCE(MAX(id), 0) AS id FROM orders');
  return String(row.id);
}

/** The sale's written orders with an id past `afterId`, and the highest such id. */
async function ordersWrittenAfter(saleId, afterId) {
  const [[row]] = await state.mysql.query(
    "SELECT COUNT(*) AS n, MAX(id) AS id FROM orders WHERE id > ? AND sale_id = ? AND status <> 'QUEUED'",
    [afterId, saleId],
  );
  return { rows: Number(row.n), highestId: row.id === null ? undefined : String(row.id) };
}

/** A cross-check from the rows' own timestamps (set by MySQL per statement, so per batch). */
async function rowTimestampSpanS(saleId) {
  const [[span]] = await state.mysql.query(
    "SELECT TIMESTAMPDIFF(MICROSECOND, MIN(created_at), MAX(created_at)) AS us FROM orders WHERE sale_id = ? AND status <> 'QUEUED'",
    [saleId],
  );
  return Number(span.us) / 1e6;
}
