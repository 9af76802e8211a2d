import { StockLeases } from '@flash-sale/stock';
import { SaleLayouts } from '@flash-sale/db';
import { bucketsOf, createRedisClient, KeyBuilder, type RedisClient, type SaleKeys } from '@flash-sale/redis';
import { StockReconciliation } from '../../apps/worker/src/lifecycle/stock-reconciliation';
import { waitFor } from '../support/fixtures';
import { useStackWorld } from '../support/stack-world';

const HOUR = 3_600_000;
const RETENTION_MS = 600_000;

/**
 * Background work follows activity: reconciliation visits the sales that changed lately, not every
 * sale, yet an idle sale whose Redis state is lost is still repaired (by the check of idle sales, and
 * after the worker's Redis connection comes back), and an ended, fully written sale's keys expire
 * while a live one's never do.
 */
describe('background work on idle sales (private redis-server, real MariaDB)', () => {
  const w = useStackWorld({
    redis: 'private',
    database: true,
    env: {
      // A lease of a sale's whole stock (3 at most here): what is not sold stays leased to Redis.
      LEASE_SIZE: '3',
      LEASE_LOW_WATER: '0',
      RECOVERY_GRACE_MS: '0',
      // The jobs run when the test says so (a scheduler may still run each once at start).
      RECONCILE_INTERVAL_MS: String(HOUR),
      IDLE_SALE_CHECK_INTERVAL_MS: String(HOUR),
      RECOVERY_INTERVAL_MS: String(HOUR),
      SALE_REDIS_RETENTION_MS: String(RETENTION_MS),
    },
  });
  let client: RedisClient;
  let keys: KeyBuilder;
  let reconciliation: StockReconciliation;

  beforeAll(() => {
    client = createRedisClient(w.testEnv.config.redis);
    keys = new KeyBuilder(w.testEnv.config.redis.keyPrefix);
    reconciliation = w.stack.worker!.get(StockReconciliation);
  });

  afterAll(() => client.disconnect());

  interface SaleWithOrders {
    saleId: string;
    orders: { orderNo: string; buyerToken: string }[];
  }

  /** A live sale of `stock` units with `sold` of them bought through the API and written. */
  async function saleWithOrders(stock: number, sold: number): Promise<SaleWithOrders> {
    const created = await w.stack.client.call<{ id: string }>('POST', '/api/admin/sales', {
      token: w.admin,
      // Ends long after the shifted clock of `runWhenAllIdle`: still live for it.
      json: { name: 'Idle', priceCents: 100, stock, endsAt: new Date(Date.now() + 24 * HOUR).toISOString() },
    });
    expect(created.status).toBe(201);
    const saleId = created.body.id;
    const orders: SaleWithOrders['orders'] = [];
    for (let i = 0; i < sold; i += 1) {
      const buyer = await w.stack.client.guest();
      const token = await w.stack.client.submitToken(saleId, buyer.token);
      const bought = await w.stack.client.call<{ orderNo: string }>('POST', `/api/sales/${saleId}/purchase`, {
        token: buyer.token,
        json: { token },
      });
      expect(bought.status).toBe(202);
      orders.push({ orderNo: bought.body.orderNo, buyerToken: buyer.token });
    }
    await waitFor(
      'orders written',
      () => ordersOf(saleId),
      (n) => n === sold,
    );
    return { saleId, orders };
  }

  async function ordersOf(saleId: string): Promise<number> {
    const [row] = (await w.db.query('SELECT COUNT(*) AS n FROM orders WHERE sale_id = ?', [saleId])) as { n: number }[];
    return Number(row!.n);
  }

  async function saleRow(saleId: string): Promise<{ redisEpoch: number; inDoubt: number; available: number }> {
    const [row] = (await w.db.query('SELECT redis_epoch, in_doubt, available FROM sales WHERE id = ?', [saleId])) as {
      redis_epoch: number;
      in_doubt: number;
      available: number;
    }[];
    return { redisEpoch: Number(row!.redis_epoch), inDoubt: Number(row!.in_doubt), available: Number(row!.available) };
  }

  /** A run as it would happen once every mark made so far has left the active window. */
  function runWhenAllIdle() {
    return reconciliation.run(Date.now() + w.testEnv.config.lifecycle.reconcileActiveWindowMs + 1_000);
  }

  /** The keys of each of the sale's buckets (`TEST_SALE_BUCKETS` runs this file on several). */
  async function bucketKeys(saleId: string): Promise<SaleKeys[]> {
    return bucketsOf(await new SaleLayouts(w.db).of(saleId)).map((bucket) => keys.bucket(bucket));
  }

  async function allKeys(saleId: string): Promise<string[]> {
    return (await bucketKeys(saleId)).flatMap((bucket) => bucket.all());
  }

  async function ttls(saleId: string): Promise<number[]> {
    const ttlsOfBuckets = await Promise.all(
      (await bucketKeys(saleId)).map((sale) =>
        Promise.all(
          [sale.meta, sale.stock, sale.buyers, sale.reservations, sale.grants].map((key) => client.pttl(key)),
        ),
      ),
    );
    // A bucket nobody bought in, or that was leased nothing, has no reservations or grants key.
    return ttlsOfBuckets.flat().filter((ttl) => ttl !== -2);
  }

  // Shared by the tests below, in order.
  const sales: SaleWithOrders[] = [];

  it('visits only the sales active lately, and the active-sales index stays small', async () => {
    // Stock 3, 2 sold: each sale keeps one leased unit in Redis (units a lost incarnation puts in doubt).
    for (let i = 0; i < 4; i += 1) sales.push(await saleWithOrders(3, 2));
    const first = await reconciliation.run();
    expect(first.reconciled).toBeGreaterThanOrEqual(sales.length);
    for (const { saleId } of sales) expect(first.drifts.get(saleId)).toBe(0);

    // Nothing happened since: an idle run visits nothing, and prunes the marks it will never need.
    const idle = await runWhenAllIdle();
    expect(idle.reconciled).toBe(0);
    expect(await client.zcard(keys.activeSales)).toBe(0);

    // A cancel (outside the purchase path) marks its sale: the next run visits that sale alone.
    const cancelled = sales[0]!;
    const [order] = cancelled.orders;
    const cancel = await w.stack.client.call('POST', `/api/orders/${order!.orderNo}/cancel`, {
      token: order!.buyerToken,
    });
    expect(cancel.status).toBe(200);
    const afterCancel = await reconciliation.run();
    expect(afterCancel.reconciled).toBe(1);
    expect([...afterCancel.drifts.keys()]).toEqual([cancelled!.saleId]);
    expect(afterCancel.drifts.get(cancelled!.saleId)).toBe(0);
    // Idle sales keep the drift last published for them.
    for (const { saleId } of sales) expect(Number(await client.hget(keys.reconciliation, saleId))).toBe(0);
  });

  it('still repairs an idle live sale whose Redis state is lost, in the check of idle sales', async () => {
    const lost = sales[1]!;
    await runWhenAllIdle(); // everything idle again
    const before = await saleRow(lost.saleId);
    await client.del(...(await allKeys(lost.saleId))); // Redis forgot the sale, the connection never dropped

    // The activity-driven run does not see it: nothing marked it.
    expect((await runWhenAllIdle()).reconciled).toBe(0);
    expect((await saleRow(lost.saleId)).redisEpoch).toBe(before.redisEpoch);

    const check = await reconciliation.checkIdleSales();
    expect(check.verified).toBeGreaterThanOrEqual(sales.length);
    expect(check.restarted).toBe(1);
    const restarted = await saleRow(lost.saleId);
    expect(restarted.redisEpoch).toBe(before.redisEpoch + 1);
    expect(restarted.inDoubt).toBe(1);

    // The restart put units in doubt: reconciliation visits the sale until they are settled, even
    // once its mark has left the window, and then the last unit sells again.
    const settling = await runWhenAllIdle();
    expect(settling.reconciled).toBe(1);
    await waitFor(
      'the in-doubt unit settled and leased again',
      async () => {
        await reconciliation.run();
        return saleRow(lost.saleId);
      },
      (row) => row.inDoubt === 0 && row.available === 0,
      10_000,
    );
    expect((await runWhenAllIdle()).reconciled).toBe(0);
    const buyer = await w.stack.client.guest();
    const token = await w.stack.client.submitToken(lost.saleId, buyer.token);
    const bought = await w.stack.client.call('POST', `/api/sales/${lost.saleId}/purchase`, {
      token: buyer.token,
      json: { token },
    });
    expect(bought.status).toBe(202);
  });

  it('reconciles every recent sale once the worker reconnects to a Redis that came back empty', async () => {
    await runWhenAllIdle();
    const before = await Promise.all(sales.map(({ saleId }) => saleRow(saleId)));
    const afterReconnect = jest.spyOn(reconciliation, 'reconcileEverySale');
    await w.redisServer.kill();
    await w.redisServer.restart();
    // No purchase: the worker's reconnect restarts every live sale. (A Redis back empty also lost the
    // job schedulers, whose re-registration runs the idle-sale check at once too; a sale may then be
    // restarted twice, which is harmless. The reconnect pass alone also covers a Redis back with its
    // data, where no scheduler runs early.)
    await waitFor(
      'the reconnect pass',
      async () => afterReconnect.mock.calls.length,
      (calls) => calls === 1,
      20_000,
    );
    await afterReconnect.mock.results[0]!.value;
    const after = await Promise.all(sales.map(({ saleId }) => saleRow(saleId)));
    after.forEach((row, i) => expect(row.redisEpoch).toBeGreaterThan(before[i]!.redisEpoch));
    for (const { saleId } of sales) {
      for (const bucket of await bucketKeys(saleId)) expect(await client.hget(bucket.meta, 'epoch')).not.toBeNull();
    }
    afterReconnect.mockRestore();
  });

  it('gives an ended, fully written sale an expiry on all its keys, and a live one none', async () => {
    const live = await saleWithOrders(2, 1);
    const ended = await saleWithOrders(2, 1);
    const waiting = await saleWithOrders(2, 1);
    for (const sale of [ended, waiting]) {
      const update = await w.stack.client.call('PATCH', `/api/admin/sales/${sale.saleId}`, {
        token: w.admin,
        json: { endsAt: new Date(Date.now() - 1_000).toISOString() },
      });
      expect(update.status).toBe(200);
    }
    // A reservation still waiting in its hand-off stream keeps an ended sale's keys.
    await client.xadd((await bucketKeys(waiting.saleId))[0]!.handoff, '*', 'orderNo', 'unwritten');

    const [endedRow] = (await w.db.query('SELECT ends_at FROM sales WHERE id = ?', [ended.saleId])) as {
      ends_at: Date;
    }[];
    const endedAt = endedRow!.ends_at;
    const check = await reconciliation.checkIdleSales();
    expect(check.retired).toBe(1);
    const expiresIn = new Date(endedAt).getTime() + RETENTION_MS - Date.now();
    for (const ttl of await ttls(ended.saleId)) {
      expect(ttl).toBeGreaterThan(expiresIn - 60_000);
      expect(ttl).toBeLessThanOrEqual(expiresIn);
    }
    expect((await ttls(waiting.saleId)).every((ttl) => ttl === -1)).toBe(true);
    expect((await ttls(live.saleId)).every((ttl) => ttl === -1)).toBe(true);
    // Visiting it again (a late change marks it) sets the same expiry: idempotent.
    const { drifts } = await reconciliation.run();
    expect(drifts.get(ended.saleId)).toBe(0);
    for (const ttl of await ttls(ended.saleId)) expect(ttl).toBeLessThanOrEqual(expiresIn);

    // Once its keys have expired, nothing takes the ended sale for a lost incarnation.
    await client.del(...(await allKeys(ended.saleId)));
    const epoch = (await saleRow(ended.saleId)).redisEpoch;
    const leases = w.stack.worker!.get(StockLeases);
    expect(await leases.verifyIncarnation(ended.saleId)).toBe('ended');
    expect(await leases.ensureLoaded(ended.saleId)).toBe('ended');
    await reconciliation.reconcile(ended.saleId);
    await reconciliation.checkIdleSales();
    expect((await saleRow(ended.saleId)).redisEpoch).toBe(epoch);
    expect(await client.exists(...(await allKeys(ended.saleId)))).toBe(0);
  });

  it('an ended sale gives back the units still leased to it; ended early and reopened, it sells them again', async () => {
    // Stock 3, all leased to Redis; 1 sold: 2 units stay leased to a sale that sells nothing more.
    const sale = await saleWithOrders(3, 1);
    const end = (endsAt: Date) =>
      w.stack.client.call('PATCH', `/api/admin/sales/${sale.saleId}`, {
        token: w.admin,
        json: { endsAt: endsAt.toISOString() },
      });
    expect((await end(new Date(Date.now() - 1_000))).status).toBe(200);
    const [before] = (await w.db.query('SELECT leased FROM sales WHERE id = ?', [sale.saleId])) as { leased: number }[];
    expect(Number(before!.leased)).toBe(2);

    await reconciliation.reconcile(sale.saleId);
    const [after] = (await w.db.query('SELECT available, leased, in_doubt FROM sales WHERE id = ?', [sale.saleId])) as {
      available: number;
      leased: number;
      in_doubt: number;
    }[];
    expect({
      available: Number(after!.available),
      leased: Number(after!.leased),
      inDoubt: Number(after!.in_doubt),
    }).toEqual({ available: 2, leased: 0, inDoubt: 0 });
    for (const bucket of await bucketKeys(sale.saleId)) expect(Number(await client.get(bucket.stock))).toBe(0);
    const audit = await w.stack.client.call<{ ok: boolean; held: number }>(
      'GET',
      `/api/admin/sales/${sale.saleId}/audit`,
      {
        token: w.admin,
      },
    );
    expect(audit.body).toMatchObject({ ok: true, held: 1 });

    // Reopened, the sale leases those units again and sells exactly them.
    expect((await end(new Date(Date.now() + HOUR))).status).toBe(200);
    const answers: number[] = [];
    for (let i = 0; i < 3; i += 1) {
      const buyer = await w.stack.client.guest();
      answers.push((await w.stack.client.buy(sale.saleId, buyer.token)).status);
    }
    expect(answers).toEqual([202, 202, 410]);
  });
});
