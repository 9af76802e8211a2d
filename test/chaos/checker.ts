import { bucketsOf, KeyBuilder } from '@flash-sale/redis';
import type { RowDataPacket } from 'mysql2/promise';
import { setTimeout as sleep } from 'node:timers/promises';
import { judgeAnswers } from './answer-rules';
import type { SystemUnderTest } from './system-under-test';
import { describe, shortToken } from './history';
import type { RunWorld } from './world';

export interface Violation {
  invariant: string;
  detail: string;
}

export interface AuditAnswer {
  ok: boolean;
  oversold: number;
  oversoldPeak: number;
  duplicateOrders: number;
  lostReservations: number;
  drift: number;
  ordersByStatus: Record<string, number>;
  books: { inDoubt: number; unitsAboveUserLimit: number; mysqlBooksBalance: boolean; redisBooksBalance: boolean };
}

interface OrderRow {
  order_no: string;
  user_id: string;
  quantity: number;
  status: string;
  submit_token: string | null;
  /** MySQL's last change of the row (ms): when a cancelled, expired or FAILED order gave its units back. */
  updatedAt: number;
  /** When MySQL wrote the row (ms), by the same clock. */
  createdAt: number;
}

interface SaleRow {
  stock: number;
  available: number;
  leased: number;
  in_doubt: number;
}

const HOLDING = new Set(['PENDING_PAYMENT', 'PAID']);

/** Readings of MySQL and Redis until one is not straddled by units on their way (readFinalState). */
const STEADY_READ_ATTEMPTS = 20;
const STEADY_READ_PAUSE_MS = 100;

function sameSale(a: SaleRow, b: SaleRow): boolean {
  return a.stock === b.stock && a.available === b.available && a.leased === b.leased && a.in_doubt === b.in_doubt;
}

/** What the system holds after quiet: MySQL's rows, Redis' balance and backlog, the audit's verdict. */
export interface FinalState {
  orders: OrderRow[];
  sale: SaleRow;
  redisBalance: number;
  handoffBacklog: number;
  audit: AuditAnswer | undefined;
}

export async function readFinalState(cluster: SystemUnderTest, world: RunWorld, adminJwt: string): Promise<FinalState> {
  const connection = await cluster.mysql();
  const redis = cluster.redisReader();
  try {
    await redis.connect();
    const keys = new KeyBuilder(cluster.redisKeyPrefix);
    // MySQL's side in one snapshot: an expiry or a cancel changes an order and the sale's row in one
    // transaction, which separate reads could straddle.
    const readSale = async () => {
      await connection.query('START TRANSACTION WITH CONSISTENT SNAPSHOT');
      const [orders] = await connection.query<(OrderRow & { updated_at: Date; created_at: Date } & RowDataPacket)[]>(
        'SELECT order_no, user_id, quantity, status, submit_token, created_at, updated_at FROM orders WHERE sale_id = ?',
        [world.sale.id],
      );
      const [[sale]] = await connection.query<(SaleRow & RowDataPacket)[]>(
        // A db-segmented sale's unsold units are its row's plus its segments' (libs/db stock-segments.ts).
        `SELECT stock, leased, in_doubt, available +
           (SELECT COALESCE(SUM(available), 0) FROM sale_stock_segments WHERE sale_id = sales.id) AS available
           FROM sales WHERE id = ?`,
        [world.sale.id],
      );
      // Where units stand between MySQL and Redis: the newest ledger row and the leases not granted yet.
      const [[mark]] = await connection.query<RowDataPacket[]>(
        `SELECT COALESCE(MAX(id), 0) AS last_id, COALESCE(SUM(state = 'PENDING'), 0) AS pending
           FROM stock_leases WHERE sale_id = ?`,
        [world.sale.id],
      );
      await connection.query('COMMIT');
      return { orders, sale: sale!, mark: `${String(mark!['last_id'])}/${String(mark!['pending'])}` };
    };
    const readRedis = async () => {
      let balance = 0;
      let backlog = 0;
      for (const bucket of bucketsOf({ id: world.sale.id, buckets: world.sale.buckets })) {
        balance += Number((await redis.get(keys.bucket(bucket).stock)) ?? 0);
        backlog += await redis.xlen(keys.bucket(bucket).handoff);
      }
      return { balance, backlog };
    };
    // MySQL's leases and Redis's balance read as of one moment: a grant or a give-back moves units between
    // them in steps (MySQL, then Redis, then MySQL's ledger), so a reading that one straddles sees units on
    // both sides or on neither. Read MySQL, Redis, MySQL again, until nothing moved in between.
    let before = await readSale();
    let redisSide = await readRedis();
    for (let attempt = 1; attempt < STEADY_READ_ATTEMPTS; attempt++) {
      const after = await readSale();
      if (after.mark === before.mark && after.mark.endsWith('/0') && sameSale(after.sale, before.sale)) break;
      await sleep(STEADY_READ_PAUSE_MS);
      before = await readSale();
      redisSide = await readRedis();
    }
    const { orders, sale } = before;
    const { balance, backlog } = redisSide;
    return {
      orders: orders.map(({ updated_at, created_at, ...row }) => ({
        ...row,
        quantity: Number(row.quantity),
        updatedAt: updated_at.getTime(),
        createdAt: created_at.getTime(),
      })),
      sale: {
        stock: Number(sale!.stock),
        available: Number(sale!.available),
        leased: Number(sale!.leased),
        in_doubt: Number(sale!.in_doubt),
      },
      redisBalance: balance,
      handoffBacklog: backlog,
      audit: await steadyAudit(cluster, world.sale.id, adminJwt),
    };
  } finally {
    await connection.end();
    redis.disconnect();
  }
}

/**
 * The audit, asked again a few times while it is not ok: its reading of MySQL and Redis may be straddled by
 * units on their way as well (a top-up after quiet). A broken promise stays broken; only such a moment passes.
 */
async function steadyAudit(
  cluster: SystemUnderTest,
  saleId: string,
  adminJwt: string,
): Promise<AuditAnswer | undefined> {
  let audit = await fetchAudit(cluster, saleId, adminJwt);
  for (let attempt = 1; attempt < STEADY_READ_ATTEMPTS && audit?.ok !== true; attempt++) {
    await sleep(STEADY_READ_PAUSE_MS);
    audit = await fetchAudit(cluster, saleId, adminJwt);
  }
  return audit;
}

export async function fetchAudit(
  cluster: SystemUnderTest,
  saleId: string,
  adminJwt: string,
): Promise<AuditAnswer | undefined> {
  try {
    const response = await fetch(`${cluster.apiUrls[0]}/api/admin/sales/${saleId}/audit`, {
      headers: { authorization: `Bearer ${adminJwt}` },
      signal: AbortSignal.timeout(5_000),
    });
    return response.ok ? ((await response.json()) as AuditAnswer) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The checker: judges the whole history against the final state. Each client remembers every 2xx it
 * got; an unknown answer allows either outcome, but at most one order per token.
 */
/**
 * Every 2xx is written by the system itself: once quiet, before anyone replays a token, MySQL holds each
 * order promised before the audit that found quiet was asked (`written`: its order numbers then). A buyer who walks away with a `202` has an order; a
 * replay must not be what makes it again (it does, under the same number, while units are left, which
 * would hide the loss from the final read). Missing only if Redis lost acknowledged data after the
 * promise, as the persistence setting the fault emulates allows (counted by `check`).
 */
export function unwrittenPromises(world: RunWorld, written: ReadonlySet<string>, quietAskedAt: number): Violation[] {
  const violations: Violation[] = [];
  for (const promise of world.promisedOrders()) {
    if (written.has(promise.orderNo)) continue;
    const promises = world.history.operations.filter(
      (operation) => operation.outcome === 'ok' && operation.orderNo === promise.orderNo,
    );
    // Promised after the audit that found quiet was asked: not among what it counted, maybe not written yet.
    if (promises[0]!.answeredAt >= quietAskedAt) continue;
    const lastPromise = promises.at(-1)!;
    if (world.dataLossAfter(lastPromise.sentAt)) continue;
    violations.push({
      invariant: 'every 202/201 is written without a replay',
      detail: `${describe(lastPromise)}, but once quiet MySQL had no order ${promise.orderNo}`,
    });
  }
  return violations;
}

export function check(world: RunWorld, state: FinalState): Violation[] {
  const violations: Violation[] = [];
  const fail = (invariant: string, detail: string) => violations.push({ invariant, detail });
  const { history, sale, buyers } = world;
  const ordersByNo = new Map(state.orders.map((row) => [row.order_no, row]));

  // One submit token: one order number, on every answer (a refusal after a promise: answer-rules.ts).
  for (const use of world.tokens) {
    const answers = history.ofToken(use.token);
    const promised = answers.filter((operation) => operation.outcome === 'ok');
    const numbers = new Set(promised.map((operation) => operation.orderNo));
    if (numbers.size > 1) {
      fail(
        'one token, one order',
        `token#${shortToken(use.token)} answered ${[...numbers].join(' and ')}: ${promised.map(describe).join('; ')}`,
      );
    }
    const first = promised[0];
    const row = state.orders.find((order) => order.submit_token === use.token);
    if (row && first?.orderNo && row.order_no !== first.orderNo) {
      fail(
        'one token, one order',
        `token#${shortToken(use.token)} was promised ${first.orderNo} but MySQL also has ${row.order_no} (${row.status}) for it`,
      );
    }
  }

  // Every 2xx ends as that buyer's order, with that number, never FAILED or missing — missing only if Redis
  // lost acknowledged data after its last 2xx, as the persistence setting the fault emulates allows.
  for (const promise of world.promisedOrders()) {
    const row = ordersByNo.get(promise.orderNo);
    const buyer = buyers[promise.buyer]!;
    const lastPromise = history.operations.filter((o) => o.outcome === 'ok' && o.orderNo === promise.orderNo).at(-1)!;
    const loss = row ? undefined : world.dataLossAfter(lastPromise.sentAt);
    if (loss) world.lostAsDocumented.push(`${describe(lastPromise)}, then ${loss.kind}`);
    else if (!row) fail('every 202/201 is kept', `buyer${promise.buyer}'s order ${promise.orderNo} does not exist`);
    else if (row.user_id !== buyer.userId) fail('every 202/201 is kept', `${promise.orderNo} belongs to another user`);
    else if (row.status === 'FAILED')
      fail('every 202/201 is kept', `buyer${promise.buyer}'s order ${promise.orderNo} ended FAILED`);
  }

  // Pay and cancel answered 200: the order is in that state.
  for (const operation of history.operations) {
    if (operation.outcome !== 'ok' || (operation.kind !== 'pay' && operation.kind !== 'cancel')) continue;
    const expected = operation.kind === 'pay' ? 'PAID' : 'CANCELLED';
    const status = ordersByNo.get(operation.subject)?.status;
    if (status !== expected) fail('a 200 on pay/cancel holds', `${describe(operation)} but the order is ${status}`);
  }

  // No order nobody was promised, beyond one per token whose answers were all unknown.
  for (const buyer of buyers) {
    const promisedNos = new Set(
      world
        .promisedOrders()
        .filter((p) => p.buyer === buyer.index)
        .map((p) => p.orderNo),
    );
    const unexplained = state.orders.filter(
      (row) => row.user_id === buyer.userId && row.status !== 'FAILED' && !promisedNos.has(row.order_no),
    );
    const unknownTokens = world.tokens
      .filter(
        (use) =>
          use.buyer === buyer.index && history.ofToken(use.token).every((operation) => operation.outcome !== 'ok'),
      )
      .filter((use) => history.ofToken(use.token).some((operation) => operation.outcome === 'info')).length;
    if (unexplained.length > unknownTokens) {
      fail(
        'no order without a purchase',
        `buyer${buyer.index} has ${unexplained.length} orders nobody was promised (${unexplained.map((row) => row.order_no).join(', ')}) and only ${unknownTokens} unanswered tokens`,
      );
    }
    const units = state.orders
      .filter((row) => row.user_id === buyer.userId && (HOLDING.has(row.status) || row.status === 'QUEUED'))
      .reduce((sum, row) => sum + row.quantity, 0);
    if (units > sale.perUserLimit) {
      fail('per-user limit in units', `buyer${buyer.index} holds ${units} units, limit ${sale.perUserLimit}`);
    }
  }

  // Stock: never oversold, every unit accounted for, none leased without a reservation behind it.
  const held = state.orders.filter((row) => HOLDING.has(row.status)).reduce((sum, row) => sum + row.quantity, 0);
  if (held > state.sale.stock) fail('no oversell', `${held} units held of ${state.sale.stock}`);
  if (state.sale.available + state.sale.leased + held !== state.sale.stock) {
    fail(
      'conservation',
      `available ${state.sale.available} + leased ${state.sale.leased} + held ${held} != stock ${state.sale.stock}`,
    );
  }
  if (state.handoffBacklog > 0) fail('quiet', `${state.handoffBacklog} reservations still unwritten after quiet`);
  if (state.sale.in_doubt > 0) fail('quiet', `${state.sale.in_doubt} units still in doubt after quiet`);
  const liveLeased = state.sale.leased - state.sale.in_doubt;
  if (state.handoffBacklog === 0 && liveLeased !== state.redisBalance) {
    fail(
      'no unit leased without a reservation',
      `MySQL has ${liveLeased} live leased units, Redis' balance is ${state.redisBalance} and nothing is unwritten`,
    );
  }
  // Never oversold at any moment either, though expiries and cancels gave units back since: replayed from
  // the rows, and the audit must remember it too.
  const peak = heldPeak(state.orders);
  if (peak > state.sale.stock) fail('no oversell, ever', `${peak} units held at once of ${state.sale.stock}`);
  if (state.audit && state.audit.oversoldPeak < peak - state.sale.stock) {
    fail(
      'the audit keeps the oversell',
      `the rows held ${peak} units at once of ${state.sale.stock}, the audit's oversoldPeak is ${state.audit.oversoldPeak}`,
    );
  }
  if (!state.audit) fail('audit', 'the audit did not answer');
  else if (!state.audit.ok) {
    const { oversold, oversoldPeak, duplicateOrders, lostReservations, drift, books } = state.audit;
    fail(
      'audit ok',
      `oversold ${oversold}, oversoldPeak ${oversoldPeak}, duplicateOrders ${duplicateOrders}, lostReservations ${lostReservations}, drift ${drift}, inDoubt ${books.inDoubt}, unitsAboveUserLimit ${books.unitsAboveUserLimit}, mysqlBooksBalance ${books.mysqlBooksBalance}`,
    );
  }
  // The answer rules, each answer judged at the instants it was sent and given.
  violations.push(...judgeAnswers(world, state));
  return violations;
}

/**
 * The most units the orders held at once, replayed from the rows by MySQL's one clock: each order holds
 * from its row's writing until it ended (cancelled or expired: its row's last change). A row is written
 * after its reservation and an order ends before its units can be sold again, so this never counts two
 * orders of one unit at once; at the same millisecond, an end comes first.
 */
export function heldPeak(orders: readonly Pick<OrderRow, 'status' | 'quantity' | 'createdAt' | 'updatedAt'>[]): number {
  const events: { at: number; units: number }[] = [];
  for (const order of orders) {
    const ended = order.status === 'CANCELLED' || order.status === 'EXPIRED';
    if (!ended && !HOLDING.has(order.status)) continue;
    events.push({ at: order.createdAt, units: order.quantity });
    if (ended) events.push({ at: order.updatedAt, units: -order.quantity });
  }
  events.sort((a, b) => a.at - b.at || a.units - b.units);
  let held = 0;
  let peak = 0;
  for (const event of events) {
    held += event.units;
    peak = Math.max(peak, held);
  }
  return peak;
}
