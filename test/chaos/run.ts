import fc from 'fast-check';
import { check, fetchAudit, readFinalState, unwrittenPromises, type Violation } from './checker';
import type { SystemUnderTest } from './system-under-test';
import { type ChaosCommand, type FaultKind, initialModel, type Model, type Real } from './commands';
import { SoldOutTrickle } from './crowd';
import { ExplorerError, stepTo } from './explorer-error';
import { armWiderFaults } from './faults/nemesis';
import { describe } from './history';
import { type ExplorerMade, RowCensus, unexplainedRows } from './mysql-rows';
import { SaleWindowSampler } from './sale-window';
import { RunWorld, type SaleUnderTest } from './world';

const INITIAL_BUYERS = 3;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** What one run needs from the exploration around it. */
export interface RunContext {
  cluster: SystemUnderTest;
  adminJwt: string;
  faults: Map<string, number>;
  kinds: ReadonlySet<FaultKind>;
  crowd: boolean;
  /**
   * The sales and buyers the exploration made so far, its sign-ins left unanswered and the unknown guests
   * put down to them (mysql-rows.ts); the run adds its own.
   */
  made: { saleIds: Set<string>; userIds: Set<string>; unansweredSignIns: number; unknownGuests: Set<string> };
}

export interface RunResult {
  world: RunWorld;
  played: number;
  violations: Violation[];
}

/**
 * One run: everything restored, a census of MySQL's rows, a fresh sale of `shape`, the schedule played on
 * it with the trickle and the sampler of its window running, then the final read and the checker. A
 * failure of the explorer's own is thrown as an ExplorerError; violations are returned.
 */
export async function playRun(
  context: RunContext,
  schedule: Iterable<ChaosCommand>,
  shape: Omit<SaleUnderTest, 'id' | 'startsAt'>,
): Promise<RunResult> {
  const { cluster, adminJwt } = context;
  stepTo('restoring every process before the run');
  await cluster.restoreAll();
  const census = await withMysql(cluster, (connection) => RowCensus.take(connection));
  const sale = await RunWorld.createSale(cluster, adminJwt, shape);
  context.made.saleIds.add(sale.id);
  const model: Model = initialModel(shape.strategy);
  const world = new RunWorld(cluster, sale, () => cluster.faultsInForce());
  world.adminJwt = adminJwt;
  world.window = new SaleWindowSampler(() => cluster.databaseUrl, sale.id);
  const trickle = context.crowd ? new SoldOutTrickle(world) : undefined;
  const real: Real = { world, cluster, faults: context.faults, played: 0 };
  try {
    await world.window.start();
    // A few buyers from the start, so that one buyer meets several faults; the schedule adds more.
    for (let index = 0; index < INITIAL_BUYERS; index++) await world.newBuyer(index % 2);
    stepTo('arming the run-wide faults');
    await armWiderFaults(context.kinds, model, real);
    trickle?.start();
    await fc.asyncModelRun(() => ({ model, real }), schedule);
    stepTo('settling (everything restored, quiet, replays) and checking');
    const violations = await settleAndCheck(cluster, world, adminJwt, trickle);
    for (const buyer of world.buyers) context.made.userIds.add(buyer.userId);
    violations.push(
      ...(await foreignRows(cluster, census, {
        ...context.made,
        unansweredSignIns: context.made.unansweredSignIns + world.unansweredSignIns,
      })),
    );
    return { world, played: real.played, violations };
  } catch (error) {
    // The explorer's own failure mid-schedule, with its faults still in force: MySQL resumed first, so the
    // clean-up below (whose readers talk to MySQL) cannot wait on a stopped server. Recovery does the rest.
    cluster.resumeMysql();
    throw error;
  } finally {
    for (const buyer of world.buyers) context.made.userIds.add(buyer.userId);
    context.made.unansweredSignIns += world.unansweredSignIns;
    await trickle?.stop();
    await world.window.stop();
    await world.close();
  }
}

async function withMysql<T>(
  cluster: SystemUnderTest,
  use: (connection: Awaited<ReturnType<SystemUnderTest['mysql']>>) => Promise<T>,
): Promise<T> {
  let connection: Awaited<ReturnType<SystemUnderTest['mysql']>>;
  try {
    connection = await cluster.mysql();
  } catch (error) {
    throw new ExplorerError("cannot reach the explorer's MySQL database", error);
  }
  try {
    return await use(connection);
  } finally {
    await connection.end().catch(() => undefined);
  }
}

/** Rows added since the run's census that no sale or buyer of the explorer's explains (mysql-rows.ts). */
async function foreignRows(cluster: SystemUnderTest, census: RowCensus, made: ExplorerMade): Promise<Violation[]> {
  return withMysql(cluster, async (connection) => {
    const added = await census.added(connection);
    const saleIds = [...made.saleIds];
    const [orders] =
      saleIds.length === 0
        ? [[]]
        : await connection.query<({ order_no: string } & import('mysql2/promise').RowDataPacket)[]>(
            'SELECT order_no FROM orders WHERE sale_id IN (?)',
            [saleIds],
          );
    const [warmUpSales] = await connection.query<
      ({ id: string; ends_at: Date } & import('mysql2/promise').RowDataPacket)[]
    >("SELECT id, ends_at FROM sales WHERE purpose = 'warm-up'");
    const warmUps = {
      endsAtMs: new Map(warmUpSales.map((sale) => [String(sale.id), new Date(sale.ends_at).getTime()])),
      lastLeftoverSweepAtMs: cluster.lastLeftoverSweepAtMs,
    };
    return unexplainedRows(added, made, new Set(orders.map((row) => row.order_no)), warmUps);
  });
}

/** The Jepsen final read: everything back up, quiet, every unknown answer settled by a replay, quiet again, judged. */
async function settleAndCheck(
  cluster: SystemUnderTest,
  world: RunWorld,
  adminJwt: string,
  trickle: SoldOutTrickle | undefined,
): Promise<Violation[]> {
  const violations: Violation[] = [];
  await cluster.restoreAll();
  world.releaseMysqlCommits();
  const quiet = await waitForQuiet(cluster, world, adminJwt);
  if (quiet) {
    // Promises given once the audit found nothing unwritten (the trickle buys on) may still be on their way.
    const written = await writtenOrderNumbers(cluster, world.sale.id);
    violations.push(...unwrittenPromises(world, written, quiet.askedAt));
  } else {
    violations.push({ invariant: 'quiet', detail: `not quiet ${cluster.quietWithinMs / 1000} s after the last fault` });
  }
  // An unknown answer must be settled one way by a replay; a promised one must replay the same order.
  for (const use of world.unsettledTokens()) {
    for (let attempt = 0; attempt < 3; attempt++) {
      await world.settle(use, attempt % 2);
      if (world.history.ofToken(use.token).at(-1)?.outcome !== 'info') break;
      await sleep(1_000);
    }
    const last = world.history.ofToken(use.token).at(-1);
    if (last?.outcome === 'info') {
      violations.push({ invariant: 'a replay settles an unknown answer', detail: describe(last) });
    }
  }
  // Every promised token replayed on each instance (sold-out traffic still arriving): the same order from both.
  for (const use of [...world.tokens]) {
    if (world.history.ofToken(use.token).some((operation) => operation.outcome === 'ok')) {
      await world.settle(use, 1);
      if (trickle) await world.settle(use, 0);
    }
  }
  await trickle?.stop();
  await waitForQuiet(cluster, world, adminJwt);
  await world.window?.stop();
  const state = await readFinalState(cluster, world, adminJwt);
  return [...violations, ...check(world, state)];
}

/** The order numbers MySQL holds for the sale. */
async function writtenOrderNumbers(cluster: SystemUnderTest, saleId: string): Promise<Set<string>> {
  return withMysql(cluster, async (connection) => {
    const [rows] = await connection.query<({ order_no: string } & import('mysql2/promise').RowDataPacket)[]>(
      'SELECT order_no FROM orders WHERE sale_id = ?',
      [saleId],
    );
    return new Set(rows.map((row) => row.order_no));
  });
}

/**
 * Quiet: nothing unwritten, nothing in doubt, no drift left for reconciliation to correct, and
 * reconciliation has looked since; with the instant the audit that found it was asked (every promise
 * answered before then was among what it counted). Undefined at the deadline. Drift is a promise about where reconciliation
 * ends ("0 once it ran"), not about an instant: a loaded machine runs it later, not differently, and
 * drift that never returns to 0 by the deadline is still judged by the final audit.
 */
async function waitForQuiet(
  cluster: SystemUnderTest,
  world: RunWorld,
  adminJwt: string,
): Promise<{ askedAt: number } | undefined> {
  const deadline = Date.now() + cluster.quietWithinMs;
  while (Date.now() < deadline) {
    const askedAt = Date.now();
    const audit = await fetchAudit(cluster, world.sale.id, adminJwt);
    if (audit && audit.ordersByStatus['QUEUED'] === 0 && audit.books.inDoubt === 0 && audit.drift === 0) {
      // Two reconciliation intervals, so that a run that raced the last write is followed by a clean one.
      await sleep(2_500);
      return { askedAt };
    }
    await sleep(300);
  }
  return undefined;
}
