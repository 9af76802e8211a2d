import { StockLeaseRepository } from '@flash-sale/db';
import type { SaleLayout } from '@flash-sale/domain';
import { SaleState } from '@flash-sale/redis';
import { StockLeases } from '@flash-sale/stock';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { WorkerModule } from '../../apps/worker/src/worker.module';
import { countRows, createLiveSale, waitFor } from '../support/fixtures';
import { buyerOfBucket, reserveOneUnit } from '../support/script-buyers';
import { startStack, type RunningStack } from '../support/running-stack';
import { closeOutageWorld, type OutageWorld, startOutageWorld } from '../support/outage-world';
import { openSaleRedis, type SaleRedisAccess } from '../support/test-redis';

/**
 * A refill on a sale with buckets asks the other buckets to give back units (docs/architecture.md "Hot
 * sales: buckets"). Redis comes back from an older copy of its data — what an `everysec` AOF, an RDB
 * snapshot or a lagging replica gives — in which a bucket still holds units MySQL has since written as
 * orders. MySQL owns every unit: it must not take those back (they would be sold again, or underflow
 * `leased` into a 500). The give-back is refused, the stale copy replaced by the next incarnation, and
 * the books balance (docs/failure-model.md, "Give-backs from an older copy").
 *
 * Real processes' state: a private redis-server with its append-only file (killed, restarted from a
 * copy), MariaDB, and a real worker that writes the orders; the refill is driven through StockLeases.
 */
describe('a give-back from a Redis restored from an older copy (private redis-server, real MariaDB)', () => {
  let world: OutageWorld;
  let own: SaleRedisAccess;
  let worker: INestApplicationContext | undefined;
  let stack: RunningStack | undefined;

  beforeEach(async () => {
    world = await startOutageWorld({
      RECONCILE_INTERVAL_MS: '1000',
      RECOVERY_INTERVAL_MS: '1000',
      RECOVERY_GRACE_MS: '500',
    });
    own = openSaleRedis(world.testEnv.config.redis);
  });

  afterEach(async () => {
    own.redis.disconnect();
    await closeOutageWorld(world, worker?.close(), stack?.close());
    worker = undefined;
    stack = undefined;
  });

  /** A process's own lease protocol, as each app builds it. */
  const processLeases = (saleRedis = own.saleRedis) =>
    new StockLeases(new StockLeaseRepository(world.db), own.scripts, saleRedis, { leaseSize: 1, lowWater: 0 });

  const buyerOf = buyerOfBucket;
  const reserve = (sale: SaleLayout, userId: string) => reserveOneUnit(own, sale, userId);

  /** A real worker writes every reservation so far into MySQL, then stops (it must not check Redis later). */
  async function writeOrders(saleId: string, count: number): Promise<void> {
    worker = await NestFactory.createApplicationContext(WorkerModule.forRoot(world.testEnv.config), { logger: false });
    await waitFor(
      `${count} orders written`,
      () =>
        countRows(world.db, `SELECT COUNT(*) AS n FROM orders WHERE sale_id = ? AND status = 'PENDING_PAYMENT'`, [
          saleId,
        ]),
      (n) => n === count,
      30_000,
    );
    await worker.close();
    worker = undefined;
  }

  /** Redis killed and started again from `copy`; resolves once the test's client answers again. */
  async function restoreOlderCopy(copy: string): Promise<void> {
    await world.redis.kill();
    world.redis.restoreSnapshot(copy);
    await world.redis.restart();
    await waitFor(
      'the client reconnected',
      () => own.redis.ping().catch(() => 'down'),
      (reply) => reply === 'PONG',
    );
  }

  async function saleCounts(saleId: string) {
    const [row] = (await world.db.query(
      `SELECT s.stock, s.available, s.leased, s.in_doubt, s.redis_epoch,
              (SELECT COALESCE(SUM(o.quantity), 0) FROM orders o
                WHERE o.sale_id = s.id AND o.status IN ('PENDING_PAYMENT', 'PAID')) AS held,
              (SELECT COALESCE(SUM(l.units), 0) FROM stock_leases l
                WHERE l.sale_id = s.id AND l.return_key IS NOT NULL) AS given_back
         FROM sales s WHERE s.id = ?`,
      [saleId],
    )) as Record<string, string | number>[];
    return Object.fromEntries(Object.entries(row!).map(([key, value]) => [key, Number(value)]));
  }

  /** The real API and worker on the same Redis and MySQL: reconciliation settles, the audit judges. */
  async function startApiAndWorker(): Promise<{ client: RunningStack['client']; admin: string }> {
    stack = await startStack(world.testEnv.config);
    return { client: stack.client, admin: await stack.client.adminToken(world.testEnv.env['ADMIN_PASSWORD']!) };
  }

  /** The audit is clean with nothing left in doubt, and MySQL's books balance. */
  async function expectAuditClean(saleId: string, api: { client: RunningStack['client']; admin: string }) {
    const audit = await waitFor(
      'the audit clean, the lost incarnation settled',
      async () =>
        (
          await api.client.call<{ ok: boolean; drift: number; books: { inDoubt: number } }>(
            'GET',
            `/api/admin/sales/${saleId}/audit`,
            { token: api.admin },
          )
        ).body,
      (body) => body.ok && body.books.inDoubt === 0,
      30_000,
    );
    expect(audit).toMatchObject({ ok: true, drift: 0 });
    const counts = await saleCounts(saleId);
    expect(counts['available']! + counts['leased']! + counts['held']!).toBe(counts['stock']);
  }

  /**
   * A live sale on 3 buckets (`balances`: its units in each, as leased): a buyer of bucket 2 reserves,
   * then the copy Redis will come back with is taken, then a buyer of each of `laterBuckets` reserves; the
   * worker writes the three orders.
   */
  async function threeOrdersAroundACopy(
    lease: { stock: number; leaseSize: number },
    balances: number[],
    laterBuckets: [number, number],
  ): Promise<{ saleId: string; sale: SaleLayout; olderCopy: string }> {
    const saleId = await createLiveSale(world.db, own.scripts, own.saleRedis, { ...lease, buckets: 3 });
    const sale: SaleLayout = { id: saleId, buckets: 3 };
    expect(await own.saleRedis.balances(sale)).toEqual(balances);
    expect(await reserve(sale, buyerOf(sale, 2, 'first'))).toBe('reserved');
    const olderCopy = world.redis.snapshot();
    expect(await reserve(sale, buyerOf(sale, laterBuckets[0], 'second'))).toBe('reserved');
    expect(await reserve(sale, buyerOf(sale, laterBuckets[1], 'third'))).toBe('reserved');
    await writeOrders(saleId, 3);
    return { saleId, sale, olderCopy };
  }

  it('is refused while other buckets hold leases, so the units it sold are never sold again', async () => {
    // Stock 4 on 3 buckets, leases of 2: bucket 0 holds 2 units, buckets 1 and 2 one each. In the copy
    // Redis will come back with, bucket 0 still holds its 2 units.
    const { saleId, sale, olderCopy } = await threeOrdersAroundACopy({ stock: 4, leaseSize: 2 }, [2, 1, 1], [0, 0]);
    // MySQL: 3 held, the one unit left is bucket 1's lease.
    expect(await saleCounts(saleId)).toMatchObject({ available: 0, leased: 1, held: 3, redis_epoch: 1 });

    // Redis comes back older: bucket 0 has 2 units again, both written as orders.
    await restoreOlderCopy(olderCopy);
    expect(await own.saleRedis.balances(sale)).toEqual([2, 1, 0]);
    const buyer = buyerOf(sale, 2, 'fourth');
    expect(await reserve(sale, buyer)).toBe('SOLD_OUT');

    // The buyer's refill asks the other buckets. MySQL takes none of bucket 0's sold units back, the
    // copy is replaced by the next incarnation, and the buyer is told to try again (not sold out).
    expect(await processLeases().refill(sale, 2, 1)).toBeGreaterThan(0);
    expect(await saleCounts(saleId)).toMatchObject({ given_back: 0, redis_epoch: 2, in_doubt: 1, held: 3 });
    expect(await own.saleRedis.balances(sale)).toEqual([0, 0, 0]);

    // Once the lost incarnation settles, its one real unit (bucket 1's) sells once; then the sale is sold out.
    const api = await startApiAndWorker();
    await expectAuditClean(saleId, api);
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push((await api.client.buy(saleId, (await api.client.guest()).token)).status);
    expect(answers).toEqual([202, 410, 410]);
    await waitFor(
      'the last order written',
      () => saleCounts(saleId),
      (counts) => counts['held'] === 4,
    );
    await expectAuditClean(saleId, api);
    expect(await saleCounts(saleId)).toMatchObject({ held: 4, available: 0, leased: 0 });
    expect(
      await countRows(world.db, `SELECT COUNT(*) AS n FROM orders WHERE sale_id = ? AND status = 'FAILED'`, [saleId]),
    ).toBe(0);
  });

  it('is refused when the copy comes back between the check of the incarnation and the give-back', async () => {
    // Stock 3 on 3 buckets, a unit in each.
    const { saleId, sale, olderCopy } = await threeOrdersAroundACopy({ stock: 3, leaseSize: 1 }, [1, 1, 1], [0, 1]);
    expect(await saleCounts(saleId)).toMatchObject({ available: 0, leased: 0, held: 3 });
    const buyer = buyerOf(sale, 2, 'fourth');
    expect(await reserve(sale, buyer)).toBe('SOLD_OUT');

    // The refill finds Redis current, then reads the buckets' balances: right then Redis comes back from
    // the older copy, in which buckets 0 and 1 still hold a unit each, both written as orders.
    const saleRedis = new SaleState(own.redis, own.keys);
    const realBalances = saleRedis.balances.bind(saleRedis);
    let restored = false;
    jest.spyOn(saleRedis, 'balances').mockImplementation(async (layout) => {
      if (!restored) {
        restored = true;
        await restoreOlderCopy(olderCopy);
      }
      return realBalances(layout);
    });
    const leases = processLeases(saleRedis);
    // MySQL leased nothing to Redis any more: taking a unit back would be `leased - 1` below 0 (a 500).
    expect(await leases.refill(sale, 2, 1)).toBeGreaterThan(0);
    expect(restored).toBe(true);
    expect(await saleCounts(saleId)).toMatchObject({ given_back: 0, redis_epoch: 2, available: 0, leased: 0 });
    // The refusal is answered once: a worker applying the give-back's hand-off entry finds it answered.
    const [recorded] = [...(await own.saleRedis.snapshot(sale)).givebacks];
    const [returnKey, given] = recorded!;
    expect(await new StockLeaseRepository(world.db).applyGiveBack(saleId, { returnKey, bucket: 0, ...given })).toBe(
      'already-applied',
    );

    // Nothing is left anywhere now: the next refill says so, and the books balance.
    expect(await reserve(sale, buyer)).toBe('SOLD_OUT');
    expect(await leases.refill(sale, 2, 1)).toBe(0);
    await expectAuditClean(saleId, await startApiAndWorker());
    expect(await saleCounts(saleId)).toMatchObject({ held: 3, available: 0, leased: 0 });
  });
});
