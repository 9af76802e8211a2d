import { Redis } from 'ioredis';
import type { DataSource } from 'typeorm';
import { Agent, request } from 'undici';
import { inBatches } from './support/api-client';
import { startScaledOutApps, type ScaledOutApps } from './support/app-processes';
import { countRows, waitFor } from './support/fixtures';
import { SERVED_BY_HEADER, startLoadBalancer, type LoadBalancer } from './support/load-balancer';
import { startRedisCluster, type LocalRedisCluster } from './support/redis-cluster';
import { createTestEnv, openDatabase, type TestEnv } from './support/test-env';

/**
 * How many cluster slots a hot sale's stock is spread over. With more than one, the sale's keys use hash
 * tags other than `{sale:<id>}`, and the master to kill is the one holding most of them.
 */
const BUCKET_COUNTS = [1, 3];

const BUYERS = 3_000;
const IN_FLIGHT = 150;
const STOCK = 900;
const PER_USER_LIMIT = 2;
/** Larger than a replica's socket buffers: what keeps writes queued in the master (see the hung-replica test). */
const BALLAST_BYTES = 32 * 1024 * 1024;
/** A buyer keeps sending the same token after a transient failure for this long before the test gives up. */
const RETRY_FOR_MS = 45_000;

interface Audit {
  ok: boolean;
  oversold: number;
  duplicateOrders: number;
  lostReservations: number;
  held: number;
  ordersByStatus: Record<string, number>;
}

interface HttpAnswer {
  status: number;
  body: { orderNo?: string; token?: string; error?: { code: string } } | undefined;
  servedBy?: string;
  retryAfterSeconds: number;
}

/** A buyer's purchase that ended: accepted, or refused for good. */
interface FinalAnswer {
  userId: string;
  token: string;
  status: number;
  code?: string;
  orderNo?: string;
}

interface Burst {
  finals: FinalAnswer[];
  /** Answers that meant "outcome unknown, send it again" (connection lost, 429, 5xx), by route and kind. */
  transient: Map<string, number>;
  /** Which API answered how many purchases (the load balancer's header). */
  purchasesServedBy: Map<string, number>;
  /** Buyers still without a final answer when their retry budget ran out. */
  unresolved: string[];
  /** Accepted purchases answered after `markPhase` was called (e.g. after a failover). */
  acceptedAfterMark: number;
  /** 202s that answered a replay of the same token (its first send's outcome was unknown). */
  acceptedOnReplay: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const bump = (counts: Map<string, number>, key: string) => counts.set(key, (counts.get(key) ?? 0) + 1);

/**
 * A burst of real buyers through the load balancer: each signs in once (shared by all sales), then, per
 * sale, asks for a submit token and buys, some of them three or four times (fresh token each time) to
 * walk into the per-user limit. Whatever is not a final answer — a connection cut by a killed API, the
 * load balancer's 502/503 while no API is ready, a 503 + retry-after — is sent again with the SAME token,
 * as the contract asks, until it is answered for good.
 */
class Buyers {
  readonly agent = new Agent({ connections: IN_FLIGHT + 20, pipelining: 1 });
  guests: { userId: string; token: string; attempts: number }[] = [];

  constructor(private readonly baseUrl: string) {}

  async send(
    method: 'GET' | 'POST',
    path: string,
    options: { token?: string; json?: unknown } = {},
  ): Promise<HttpAnswer | undefined> {
    const headers: Record<string, string> = {};
    if (options.token) headers['authorization'] = `Bearer ${options.token}`;
    if (options.json !== undefined) headers['content-type'] = 'application/json';
    try {
      const response = await request(`${this.baseUrl}${path}`, {
        method,
        headers,
        body: options.json === undefined ? undefined : JSON.stringify(options.json),
        dispatcher: this.agent,
      });
      const text = await response.body.text();
      const json = String(response.headers['content-type'] ?? '').includes('json');
      return {
        status: response.statusCode,
        body: json && text ? (JSON.parse(text) as HttpAnswer['body']) : undefined,
        servedBy: response.headers[SERVED_BY_HEADER] as string | undefined,
        retryAfterSeconds: Number(response.headers['retry-after'] ?? 0),
      };
    } catch {
      return undefined; // the connection died: the request may or may not have been handled
    }
  }

  /**
   * Sends until the answer is final or time is up. As the storefront does, a lost connection, a 429 or
   * any 5xx is an unknown outcome: the same request (the same submit token) is sent again. `transient`
   * counts them by kind, under `label`.
   */
  async untilFinal(
    method: 'GET' | 'POST',
    path: string,
    options: { token?: string; json?: unknown },
    transient?: Map<string, number>,
    label = '',
  ): Promise<HttpAnswer | undefined> {
    const deadline = Date.now() + RETRY_FOR_MS;
    for (;;) {
      const answer = await this.send(method, path, options);
      const kind = !answer ? 'connection lost' : answer.status === 429 || answer.status >= 500 ? answer.status : null;
      if (kind === null) return answer;
      if (transient) bump(transient, `${label}${kind}`);
      if (Date.now() > deadline) return undefined;
      const retryAfterMs = Math.min((answer?.retryAfterSeconds ?? 0) * 1000, 1000);
      await sleep(retryAfterMs || 100 + Math.random() * 200);
    }
  }

  async signIn(count: number): Promise<void> {
    this.guests = await inBatches(
      Array.from({ length: count }, (_, i) => i),
      IN_FLIGHT,
      async (i) => {
        const answer = await this.untilFinal('POST', '/api/auth/guest', { json: {} });
        if (answer?.status !== 201) throw new Error(`guest sign-in: ${answer?.status}`);
        const session = answer.body as unknown as { token: string; user: { id: string } };
        // One buyer in ten tries four times, one in ten three times: beyond the limit of two.
        const attempts = i % 10 === 0 ? 4 : i % 10 === 5 ? 3 : 1;
        return { userId: session.user.id, token: session.token, attempts };
      },
    );
  }

  /**
   * Starts the burst on one sale; `onAccepted` sees the count of 202s so far (a test kills something at a
   * threshold), `markPhase` starts counting the 202s answered after it.
   */
  burst(saleId: string, onAccepted: (acceptedSoFar: number) => void): { finished: Promise<Burst>; markPhase(): void } {
    const result: Burst = {
      finals: [],
      transient: new Map(),
      purchasesServedBy: new Map(),
      unresolved: [],
      acceptedAfterMark: 0,
      acceptedOnReplay: 0,
    };
    let marked = false;
    let accepted = 0;
    const finished = inBatches(this.guests, IN_FLIGHT, async (guest) => {
      for (let attempt = 0; attempt < guest.attempts; attempt++) {
        const issued = await this.untilFinal(
          'POST',
          `/api/sales/${saleId}/tokens`,
          { token: guest.token },
          result.transient,
          'token ',
        );
        if (issued?.status !== 201) {
          result.unresolved.push(`${guest.userId}: token ${issued?.status ?? 'no answer'}`);
          return;
        }
        const submitToken = issued.body!.token!;
        const replays = new Map<string, number>();
        const answer = await this.untilFinal(
          'POST',
          `/api/sales/${saleId}/purchase`,
          { token: guest.token, json: { token: submitToken } },
          replays,
          'purchase ',
        );
        for (const [kind, n] of replays) result.transient.set(kind, (result.transient.get(kind) ?? 0) + n);
        if (!answer) {
          result.unresolved.push(`${guest.userId}: purchase unanswered`);
          return;
        }
        if (answer.servedBy) bump(result.purchasesServedBy, answer.servedBy);
        result.finals.push({
          userId: guest.userId,
          token: submitToken,
          status: answer.status,
          code: answer.body?.error?.code,
          orderNo: answer.body?.orderNo,
        });
        if (answer.status === 202) {
          accepted += 1;
          if (replays.size > 0) result.acceptedOnReplay += 1;
          if (marked) result.acceptedAfterMark += 1;
          onAccepted(accepted);
        }
        // A buyer told the sale is over stops trying.
        if (answer.status === 410) return;
      }
    }).then(() => result);
    return { finished, markPhase: () => (marked = true) };
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}

/**
 * The app scaled out on real processes: two APIs behind HAProxy (round robin, checked on /health/ready),
 * two workers, a three-master Redis Cluster with a replica per master, MariaDB. Thousands of buyers on
 * one hot sale must buy exactly its stock, each 202 must become its buyer's order, nobody above the
 * per-user limit — also while an API and a worker are SIGKILLed mid-burst, and while the master holding
 * the sale is SIGKILLed and its replica promoted (DURABLE_ACK=replica).
 */
describe('scaled out: 2 APIs behind HAProxy, 2 workers, a Redis Cluster with replicas, MariaDB', () => {
  let cluster: LocalRedisCluster;
  let testEnv: TestEnv;
  let db: DataSource;
  let apps: ScaledOutApps;
  let balancer: LoadBalancer;
  let buyers: Buyers;
  let adminToken: string;

  beforeAll(async () => {
    cluster = await startRedisCluster(3, { replicasPerMaster: 1 });
    testEnv = await createTestEnv({
      REDIS_CLUSTER_NODES: cluster.nodes.join(','),
      // A 202 only once a replica holds the reservation: what makes a failover lose no promise.
      DURABLE_ACK: 'replica',
      DURABLE_ACK_TIMEOUT_MS: '1000',
      // A killed worker's job and hand-offs are retaken within seconds; sweeps and reconciliation run
      // often enough to settle a sale within the test.
      RECOVERY_INTERVAL_MS: '1000',
      RECOVERY_GRACE_MS: '1000',
      RECONCILE_INTERVAL_MS: '2000',
    });
    db = await openDatabase(testEnv.config);
    apps = await startScaledOutApps(testEnv.env, 2, 2);
    balancer = await startLoadBalancer(apps.apis.map((api) => api.port!));
    buyers = new Buyers(balancer.url);
    const admin = await buyers.untilFinal('POST', '/api/auth/admin', {
      json: { password: testEnv.env['ADMIN_PASSWORD'] },
    });
    adminToken = (admin!.body as unknown as { token: string }).token;
    await buyers.signIn(BUYERS);
  }, 180_000);

  afterAll(async () => {
    await buyers?.close();
    await balancer?.stop();
    await apps?.stop();
    await db?.destroy();
    await cluster?.stop();
    await testEnv?.cleanup();
  }, 60_000);

  /** Whatever an earlier scenario killed is running again, and the load balancer sends to every API. */
  async function wholeStack(): Promise<void> {
    for (const app of [...apps.apis, ...apps.workers]) if (!app.running) await app.restart();
    const names = new Set<string>();
    await waitFor(
      'the load balancer to send to every API',
      async () => {
        const answer = await buyers.send('GET', '/health');
        if (answer?.servedBy) names.add(answer.servedBy);
        return names.size;
      },
      (n) => n === apps.apis.length,
      30_000,
    );
  }

  async function createHotSale(name: string, buckets: number): Promise<string> {
    const created = await buyers.untilFinal('POST', '/api/admin/sales', {
      token: adminToken,
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
  }

  /**
   * Every final answer is one the contract allows; the sale sold exactly its stock; every 202 is its
   * buyer's written order (by order number), none FAILED; nobody holds more than the limit; the audit
   * is ok. Returns the accepted answers.
   */
  async function expectSoldExactlyAndKept(saleId: string, burst: Burst): Promise<FinalAnswer[]> {
    // What the burst met, for whoever reads a failure (the apps' logs: AppProcess.logFile).
    console.log(
      `sale ${saleId}: ${burst.finals.length} answers, transient ${JSON.stringify(Object.fromEntries(burst.transient))}, ` +
        `${burst.acceptedOnReplay} accepted on a replay, ` +
        `purchases by API ${JSON.stringify(Object.fromEntries(burst.purchasesServedBy))}, logs ${apps.apis[0]!.logFile}`,
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
            (await db.query(`SELECT order_no, user_id, status FROM orders WHERE sale_id = ?`, [saleId])) as {
              order_no: string;
              user_id: string;
              status: string;
            }[]
          ).map((row) => [row.order_no, row]),
        ),
      (rows) => orderNos.every((orderNo) => rows.get(orderNo)?.status === 'PENDING_PAYMENT'),
      90_000,
    ).catch(async (error: unknown) => {
      const rows = (await db.query(`SELECT order_no, status FROM orders WHERE sale_id = ?`, [saleId])) as {
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
        db,
        `SELECT COALESCE(MAX(units), 0) AS n FROM (SELECT SUM(quantity) AS units FROM orders
          WHERE sale_id = ? AND status IN ('PENDING_PAYMENT', 'PAID') GROUP BY user_id) AS per_user`,
        [saleId],
      ),
    ).toBeLessThanOrEqual(PER_USER_LIMIT);

    const audit = await waitFor(
      'the audit to balance',
      async () => (await buyers.untilFinal('GET', `/api/admin/sales/${saleId}/audit`, { token: adminToken }))?.body,
      (report) => (report as Audit | undefined)?.ok === true,
      60_000,
    ).catch(async (error: unknown) => {
      const last = await buyers.send('GET', `/api/admin/sales/${saleId}/audit`, { token: adminToken });
      throw new Error(`audit never ok: ${JSON.stringify(last?.body)}: ${String(error)}`);
    });
    expect(audit).toMatchObject({ ok: true, oversold: 0, duplicateOrders: 0, lostReservations: 0, held: STOCK });
    // The contract's purchase errors include no 500: a dependency that is down is a 503 with retry-after.
    // (Checked last, so that a failure here says the books above held.)
    const internalErrors = [...burst.transient].filter(([kind]) => kind.endsWith(' 500'));
    expect(Object.fromEntries(internalErrors)).toEqual({});
    return accepted;
  }

  describe.each(BUCKET_COUNTS)('a hot redis-lua sale over %i bucket(s)', (buckets) => {
    it('3,000 buyers through the load balancer buy exactly the stock, every 202 is its order, limit held', async () => {
      await wholeStack();
      const saleId = await createHotSale(`Scale-out ${buckets}`, buckets);
      const burst = await buyers.burst(saleId, () => undefined).finished;
      // Both APIs sold: the load balancer spread the burst.
      expect([...burst.purchasesServedBy.keys()].sort()).toEqual(['api-1', 'api-2']);
      await expectSoldExactlyAndKept(saleId, burst);
    }, 150_000);

    it('an API and a worker SIGKILLed mid-burst: buyers replay their tokens, every 202 is still its order', async () => {
      await wholeStack();
      const saleId = await createHotSale(`Scale-out kill ${buckets}`, buckets);
      const [victimApi, victimWorker] = [apps.apis[0]!, apps.workers[0]!];
      let kills: Promise<number> | undefined;
      const running = buyers.burst(saleId, (acceptedSoFar) => {
        if (kills || acceptedSoFar < STOCK / 3) return;
        kills = (async () => {
          const ordersAtKill = await countRows(db, 'SELECT COUNT(*) AS n FROM orders WHERE sale_id = ?', [saleId]);
          await Promise.all([victimApi.kill(), victimWorker.kill()]);
          return ordersAtKill;
        })();
      });
      const burst = await running.finished;
      expect(kills).toBeDefined();
      const ordersAtKill = await kills!;
      // The kill landed mid-burst: requests in flight on the killed API were cut (the load balancer's
      // 502, or a lost connection) and replayed; the surviving API sold the rest.
      expect(
        (burst.transient.get('purchase 502') ?? 0) + (burst.transient.get('purchase connection lost') ?? 0),
      ).toBeGreaterThan(0);
      expect(ordersAtKill).toBeLessThan(STOCK);
      await expectSoldExactlyAndKept(saleId, burst);
    }, 150_000);

    it('the master holding the sale SIGKILLed mid-burst, its replica promoted: no 202 lost, no oversell', async () => {
      await wholeStack();
      const saleId = await createHotSale(`Scale-out failover ${buckets}`, buckets);
      const victimPort = await masterHoldingSale(saleId, buckets);
      // The way many buckets are found (SCAN per master) agrees with the slot's owner for one.
      if (buckets === 1) expect(await masterWithMostSaleKeys(saleId)).toBe(victimPort);
      let failover: Promise<{ promoted: number; acceptedBeforeKill: number }> | undefined;
      const running = buyers.burst(saleId, (acceptedSoFar) => {
        if (failover || acceptedSoFar < STOCK / 3) return;
        failover = (async () => {
          const promoted = await cluster.killMasterAndAwaitFailover(victimPort);
          running.markPhase();
          // DURABLE_ACK=replica sells only while a replica confirms: the killed node comes back as the
          // promoted master's replica, as an operator would replace it.
          await cluster.restartAsReplica(victimPort);
          return { promoted, acceptedBeforeKill: acceptedSoFar };
        })();
      });
      const burst = await running.finished;
      expect(failover).toBeDefined();
      const { promoted, acceptedBeforeKill } = await failover!;
      expect(acceptedBeforeKill).toBeLessThan(STOCK);
      if (buckets === 1) expect(await cluster.masterOfSlot(await cluster.keySlot(`{sale:${saleId}}`))).toBe(promoted);
      // The sale went on selling on the promoted replica.
      expect(burst.acceptedAfterMark).toBeGreaterThan(0);
      await expectSoldExactlyAndKept(saleId, burst);
    }, 170_000);

    it("DURABLE_ACK=replica: no 202 while the sale master's replica hangs, so its failover loses none", async () => {
      // The failover above keeps every 202 when replication is quicker than the answer, as it usually
      // is. This pins the promise itself: the sale's replica hangs (SIGSTOP) while buyers buy, so a 202
      // is allowed only if a replica of the master holding the reservation confirmed it — none can. The
      // workers hang too, so that nothing reaches MySQL before the master dies.
      await wholeStack();
      const saleId = await createHotSale(`Scale-out hung replica ${buckets}`, buckets);
      const victimPort = await masterHoldingSale(saleId, buckets);
      const replicaPort = await cluster.replicaOf(victimPort);
      const wave = buyers.guests.slice(0, 300);
      const indices = wave.map((_, i) => i);
      const tokens = await inBatches(wave, IN_FLIGHT, async (guest) => {
        const issued = await buyers.untilFinal('POST', `/api/sales/${saleId}/tokens`, { token: guest.token });
        return issued!.body!.token!;
      });

      // A key of the sale on the victim gives the hash tag of a slot it serves: the ballast goes there.
      const [saleKey] = await cluster.keysOn(victimPort, saleKeyPattern(saleId));
      const ballastKey = `${saleKey!.slice(0, saleKey!.indexOf('}') + 1)}:test-ballast`;
      const victim = new Redis({ port: victimPort, host: '127.0.0.1', maxRetriesPerRequest: 0 });
      victim.on('error', () => undefined); // it is killed below

      for (const worker of apps.workers) worker.pause();
      cluster.signal(replicaPort, 'SIGSTOP');
      let firstAnswers: (HttpAnswer | undefined)[];
      try {
        // A hung replica's kernel still takes a few MB of replication stream into its socket buffer; a
        // write larger than that keeps the reservations behind it in the master's own output buffer,
        // where they die with it — as on a replica link that lags.
        await victim.set(ballastKey, 'x'.repeat(BALLAST_BYTES));
        firstAnswers = await inBatches(indices, IN_FLIGHT, (i) =>
          buyers.send('POST', `/api/sales/${saleId}/purchase`, { token: wave[i]!.token, json: { token: tokens[i] } }),
        );
        await cluster.killMasterAndAwaitFailover(victimPort, {
          afterKill: () => cluster.signal(replicaPort, 'SIGCONT'),
        });
      } finally {
        victim.disconnect();
        cluster.signal(replicaPort, 'SIGCONT');
        for (const worker of apps.workers) worker.resume();
      }
      await cluster.restartAsReplica(victimPort);

      // Every buyer's answer, the uncertain ones replayed with the same token now that a replica is back.
      const acknowledgedWhileHung = wave.flatMap((guest, i) =>
        firstAnswers[i]?.status === 202 ? [{ userId: guest.userId, orderNo: firstAnswers[i]!.body!.orderNo! }] : [],
      );
      const replayed = await inBatches(indices, IN_FLIGHT, async (i) => {
        const first = firstAnswers[i];
        if (first && first.status < 500 && first.status !== 429) return first;
        return buyers.untilFinal('POST', `/api/sales/${saleId}/purchase`, {
          token: wave[i]!.token,
          json: { token: tokens[i] },
        });
      });
      const accepted = wave.flatMap((guest, i) =>
        replayed[i]?.status === 202 ? [{ userId: guest.userId, orderNo: replayed[i]!.body!.orderNo! }] : [],
      );
      expect(accepted).toHaveLength(wave.length); // stock enough for all: everyone bought in the end

      const written = async () =>
        new Map(
          (
            (await db.query(`SELECT order_no, user_id FROM orders WHERE sale_id = ? AND status = 'PENDING_PAYMENT'`, [
              saleId,
            ])) as { order_no: string; user_id: string }[]
          ).map((row) => [row.order_no, row.user_id]),
        );
      const rows = await waitFor(
        'every 202 written',
        written,
        (found) => accepted.every(({ orderNo }) => found.has(orderNo)),
        30_000,
      ).catch(() => written());
      // A 202 answered while no replica could hold it, whose reservation died with the master: its
      // buyer was promised an order that no row carries.
      const brokenPromises = acknowledgedWhileHung.filter(({ orderNo, userId }) => rows.get(orderNo) !== userId);
      expect({ acknowledgedWhileHung: acknowledgedWhileHung.length, brokenPromises }).toEqual({
        acknowledgedWhileHung: acknowledgedWhileHung.length,
        brokenPromises: [],
      });
      expect(accepted.filter(({ orderNo, userId }) => rows.get(orderNo) !== userId)).toEqual([]);
      // The promise itself: with the only replica of the sale's one slot hung, no purchase may be
      // acknowledged. (Spread over buckets, the others' masters still have their replicas.)
      if (buckets === 1) expect(acknowledgedWhileHung).toEqual([]);
    }, 150_000);
  });

  /** A SCAN glob for the sale's keys, whatever their hash tag (the id is followed by a non-digit). */
  function saleKeyPattern(saleId: string): string {
    return `${testEnv.env['REDIS_KEY_PREFIX']}:*sale:${saleId}[^0-9]*`;
  }

  /**
   * The master to kill: with one bucket, the one serving the slot of the sale's hash tag; with more, the
   * one holding most of the sale's keys (each bucket's keys carry the sale id in their own hash tag).
   */
  async function masterHoldingSale(saleId: string, buckets: number): Promise<number> {
    if (buckets === 1) return cluster.masterOfSlot(await cluster.keySlot(`{sale:${saleId}}`));
    return masterWithMostSaleKeys(saleId);
  }

  async function masterWithMostSaleKeys(saleId: string): Promise<number> {
    const counts = await cluster.keysPerMaster(saleKeyPattern(saleId));
    const [port, keys] = [...counts.entries()].sort((a, b) => b[1] - a[1])[0]!;
    if (keys === 0) throw new Error(`no master holds a key of sale ${saleId}`);
    return port;
  }
});
