import { readFileSync } from 'node:fs';
import type { DataSource } from 'typeorm';
import { type AppProcess, startScaledOutApps, type ScaledOutApps } from '../support/app-processes';
import { countRows, waitFor } from '../support/fixtures';
import { startLoadBalancer, type LoadBalancer } from '../support/load-balancer';
import { startRedisCluster, type LocalRedisCluster } from '../../scripts/lib/redis-cluster.mjs';
import { createTestEnv, openDatabase, type TestEnv } from '../support/test-env';
import { type Burst, Buyers, bump, type FinalAnswer } from './buyers';

export const BUYERS = 3_000;
export const STOCK = 900;
export const PER_USER_LIMIT = 2;

interface Audit {
  ok: boolean;
  oversold: number;
  duplicateOrders: number;
  lostReservations: number;
  held: number;
  ordersByStatus: Record<string, number>;
}

/**
 * The app scaled out on real processes: two APIs behind HAProxy (round robin, checked on /health/ready),
 * two workers, a three-master Redis Cluster with a replica per master, MariaDB; ready once its
 * `beforeAll` has run.
 */
export interface ScaledOutWorld {
  cluster: LocalRedisCluster;
  testEnv: TestEnv;
  db: DataSource;
  apps: ScaledOutApps;
  balancer: LoadBalancer;
  /** The buyers, signed in once for every scenario of the file. */
  buyers: Buyers;
  adminToken: string;
  /** Whatever an earlier scenario killed is running again, and the load balancer sends to every API. */
  wholeStack(): Promise<void>;
  /** A live redis-lua sale of STOCK units, PER_USER_LIMIT each, over `buckets` buckets. */
  createHotSale(name: string, buckets: number): Promise<string>;
  /**
   * Every final answer is one the contract allows; the sale sold exactly its stock; every 202 is its
   * buyer's written order (by order number), none FAILED; nobody holds more than the limit; the audit
   * is ok. Returns the accepted answers.
   */
  expectSoldExactlyAndKept(saleId: string, burst: Burst): Promise<FinalAnswer[]>;
  /** A SCAN glob for the sale's keys, whatever their hash tag (the id is followed by a non-digit). */
  saleKeyPattern(saleId: string): string;
  /**
   * The master to kill: with one bucket, the one serving the slot of the sale's hash tag; with more, the
   * one holding most of the sale's keys (each bucket's keys carry the sale id in their own hash tag).
   */
  masterHoldingSale(saleId: string, buckets: number): Promise<number>;
  masterWithMostSaleKeys(saleId: string): Promise<number>;
}

/** Registers the file's `beforeAll`/`afterAll`: the whole scaled-out stack, and BUYERS buyers signed in. */
export function useScaledOutWorld(): ScaledOutWorld {
  const w = {} as ScaledOutWorld;
  beforeAll(async () => {
    w.cluster = await startRedisCluster({ replicasPerMaster: 1 });
    w.testEnv = await createTestEnv({
      REDIS_CLUSTER_NODES: w.cluster.nodes.join(','),
      // A 202 only once a replica holds the reservation: what makes a failover lose no promise.
      DURABLE_ACK: 'replica',
      DURABLE_ACK_TIMEOUT_MS: '1000',
      // A killed worker's job and hand-offs are retaken within seconds; sweeps and reconciliation run
      // often enough to settle a sale within the test.
      RECOVERY_INTERVAL_MS: '1000',
      RECOVERY_GRACE_MS: '1000',
      RECONCILE_INTERVAL_MS: '2000',
    });
    w.db = await openDatabase(w.testEnv.config);
    w.apps = await startScaledOutApps(w.testEnv.env, 2, 2);
    w.balancer = await startLoadBalancer(w.apps.apis.map((api) => api.port!));
    w.buyers = new Buyers(w.balancer.url);
    const admin = await w.buyers.untilFinal('POST', '/api/auth/admin', {
      json: { password: w.testEnv.env['ADMIN_PASSWORD'] },
    });
    w.adminToken = (admin!.body as unknown as { token: string }).token;
    await w.buyers.signIn(BUYERS);
  }, 180_000);

  afterAll(async () => {
    await w.buyers?.close();
    await w.balancer?.stop();
    await w.apps?.stop();
    await w.db?.destroy();
    await w.cluster?.stop();
    await w.testEnv?.cleanup();
  }, 60_000);

  w.wholeStack = async (): Promise<void> => {
    for (const app of [...w.apps.apis, ...w.apps.workers]) if (!app.running) await app.restart();
    const names = new Set<string>();
    await waitFor(
      'the load balancer to send to every API',
      async () => {
        const answer = await w.buyers.send('GET', '/health');
        if (answer?.servedBy) names.add(answer.servedBy);
        return names.size;
      },
      (n) => n === w.apps.apis.length,
      30_000,
    );
  };

  w.createHotSale = async (name: string, buckets: number): Promise<string> => {
    const created = await w.buyers.untilFinal('POST', '/api/admin/sales', {
      token: w.adminToken,
      json: {
        name,
        priceCents: 500,
        stock: STOCK,
        perUserLimit: PER_USER_LIMIT,
        strategy: 'redis-lua',
        purpose: 'load-test',
        endsAt: new Date(Date.now() + 3_600_000).toISOString(),
        ...(buckets > 1 ? { buckets } : {}),
      },
    });
    if (created?.status !== 201) throw new Error(`sale creation: ${created?.status} ${JSON.stringify(created?.body)}`);
    return (created.body as unknown as { id: string }).id;
  };

  w.expectSoldExactlyAndKept = async (saleId: string, burst: Burst): Promise<FinalAnswer[]> => {
    // What the burst met, for whoever reads a failure (the apps' logs: AppProcess.logFile).
    console.log(
      `sale ${saleId}: ${burst.finals.length} answers, transient ${JSON.stringify(Object.fromEntries(burst.transient))}, ` +
        `${burst.acceptedOnReplay} accepted on a replay, ` +
        `purchases by API ${JSON.stringify(Object.fromEntries(burst.purchasesServedBy))}, logs ${w.apps.apis[0]!.logFile}`,
    );
    expect(burst.unresolved).toEqual([]);
    const unexpected = burst.finals.filter(
      (final) =>
        !(
          final.status === 202 ||
          (final.status === 409 && final.code === 'LIMIT_REACHED') ||
          (final.status === 410 && final.code === 'SOLD_OUT')
        ),
    );
    expect(unexpected).toEqual([]);
    const accepted = burst.finals.filter((final) => final.status === 202);
    const orderNos = accepted.map((final) => final.orderNo!);
    expect(new Set(orderNos).size).toBe(orderNos.length);
    expect(accepted).toHaveLength(STOCK);
    const perBuyer = new Map<string, number>();
    for (const final of accepted) bump(perBuyer, final.userId);
    expect(Math.max(...perBuyer.values())).toBeLessThanOrEqual(PER_USER_LIMIT);

    const written = await waitFor(
      'every accepted purchase written to MySQL',
      async () =>
        new Map(
          (
            (await w.db.query(`SELECT order_no, user_id, status FROM orders WHERE sale_id = ?`, [saleId])) as {
              order_no: string;
              user_id: string;
              status: string;
            }[]
          ).map((row) => [row.order_no, row]),
        ),
      (rows) => orderNos.every((orderNo) => rows.get(orderNo)?.status === 'PENDING_PAYMENT'),
      90_000,
    ).catch(async (error: unknown) => {
      const rows = (await w.db.query(`SELECT order_no, status FROM orders WHERE sale_id = ?`, [saleId])) as {
        order_no: string;
        status: string;
      }[];
      const byOrderNo = new Map(rows.map((row) => [row.order_no, row.status]));
      const missing = orderNos.filter((orderNo) => byOrderNo.get(orderNo) !== 'PENDING_PAYMENT');
      throw new Error(
        `${missing.length} of ${orderNos.length} accepted purchases not written as PENDING_PAYMENT ` +
          `(e.g. ${missing
            .slice(0, 5)
            .map((orderNo) => `${orderNo}: ${byOrderNo.get(orderNo) ?? 'no row'}`)
            .join(', ')}): ${String(error)}`,
      );
    });
    expect(accepted.filter((final) => written.get(final.orderNo!)!.user_id !== final.userId)).toEqual([]);
    // Nothing but the accepted purchases became an order (no order a buyer was never told about).
    expect([...written.values()].filter((row) => row.status !== 'PENDING_PAYMENT')).toEqual([]);
    expect(written.size).toBe(STOCK);
    expect(
      await countRows(
        w.db,
        `SELECT COALESCE(MAX(units), 0) AS n FROM (SELECT SUM(quantity) AS units FROM orders
          WHERE sale_id = ? AND status IN ('PENDING_PAYMENT', 'PAID') GROUP BY user_id) AS per_user`,
        [saleId],
      ),
    ).toBeLessThanOrEqual(PER_USER_LIMIT);

    const audit = await waitFor(
      'the audit to balance',
      async () => (await w.buyers.untilFinal('GET', `/api/admin/sales/${saleId}/audit`, { token: w.adminToken }))?.body,
      (report) => (report as Audit | undefined)?.ok === true,
      60_000,
    ).catch(async (error: unknown) => {
      const last = await w.buyers.send('GET', `/api/admin/sales/${saleId}/audit`, { token: w.adminToken });
      throw new Error(`audit never ok: ${JSON.stringify(last?.body)}: ${String(error)}`);
    });
    expect(audit).toMatchObject({ ok: true, oversold: 0, duplicateOrders: 0, lostReservations: 0, held: STOCK });
    // The contract's purchase errors include no 500: a dependency that is down is a 503 with retry-after.
    // (Checked last, so that a failure here says the books above held.)
    const internalErrors = [...burst.transient].filter(([kind]) => kind.endsWith(' 500'));
    if (internalErrors.length > 0) {
      throw new Error(
        `500s in the burst ${JSON.stringify(Object.fromEntries(internalErrors))}; the errors the API processes ` +
          `logged as faults (a 500 is among them; a 503 whose cause is known is too): ${unexpectedErrorsLogged(w.apps.apis)}`,
      );
    }
    return accepted;
  };

  w.saleKeyPattern = (saleId: string): string => {
    return `${w.testEnv.env['REDIS_KEY_PREFIX']}:*sale:${saleId}[^0-9]*`;
  };

  w.masterHoldingSale = async (saleId: string, buckets: number): Promise<number> => {
    if (buckets === 1) return w.cluster.masterOfSlot(await w.cluster.keySlot(`{sale:${saleId}}`));
    return w.masterWithMostSaleKeys(saleId);
  };

  w.masterWithMostSaleKeys = async (saleId: string): Promise<number> => {
    const counts = await w.cluster.keysPerMaster(w.saleKeyPattern(saleId));
    const [port, keys] = [...counts.entries()].sort((a, b) => b[1] - a[1])[0]!;
    if (keys === 0) throw new Error(`no master holds a key of sale ${saleId}`);
    return port;
  };
  return w;
}

/** The first line of each error the API processes logged as a fault, with how often: what a 500 was. */
function unexpectedErrorsLogged(apis: readonly AppProcess[]): string {
  const counts = new Map<string, number>();
  for (const api of apis) {
    for (const line of readFileSync(api.logFile, 'utf8').split('\n')) {
      if (!line.includes('"context":"ErrorFilter"')) continue;
      const stack = (JSON.parse(line) as { err?: { stack?: string } }).err?.stack ?? line;
      const first = stack.split('\n', 1)[0]!.slice(0, 200);
      counts.set(first, (counts.get(first) ?? 0) + 1);
    }
  }
  return JSON.stringify([...counts].sort((a, b) => b[1] - a[1]));
}
