import { StockLeaseRepository } from '@flash-sale/db';
import type { SaleLayout } from '@flash-sale/domain';
import { ReservationScripts, SaleState } from '@flash-sale/redis';
import { StockLeases } from '@flash-sale/stock';
import { useStoreWorld } from '../support/stack-world';
import { createLiveSale } from '../support/fixtures';
import { PrivateRedisServer } from '../support/private-redis';
import { buyerOfBucket, gateCalls, reserveOneUnit } from '../support/script-buyers';
import { openSaleRedis, type SaleRedisAccess } from '../support/test-redis';

/**
 * A buyer's refill on a sale with buckets (docs/architecture.md "Hot sales: buckets") while another
 * process is between the two halves of a lease: its MySQL half is recorded (PENDING) before the refill
 * looks at the buckets, and its Redis grant lands during that look, in a bucket the look already read as
 * empty. The unit was moving the whole time, so the refill must not report the sale sold out.
 */
describe('a refill that meets a lease on its way to another bucket (real Redis and MariaDB)', () => {
  const w = useStoreWorld();

  /** A process's own lease protocol, as each app builds it. */
  const processLeases = (
    scripts: ReservationScripts,
    saleRedis: SaleState,
    repository = new StockLeaseRepository(w.db),
  ) => new StockLeases(repository, scripts, saleRedis, { leaseSize: 1, lowWater: 0 });

  const buyerOf = buyerOfBucket;
  const reserve = (sale: SaleLayout, userId: string, on: SaleRedisAccess = w) => reserveOneUnit(on, sale, userId);

  /** A process whose lease grants wait at a gate the test opens, once their MySQL half is recorded. */
  function gatedGrants() {
    const scripts = new ReservationScripts(w.redis, w.keys);
    const { reached: leaseRecorded, open: openGate } = gateCalls(scripts, 'grantLease');
    return { leases: processLeases(scripts, w.saleRedis), leaseRecorded, openGate };
  }

  /** A process whose first look at the buckets' balances is followed, before it goes on, by `meanwhile`. */
  function leasesLookingWhile(meanwhile: () => Promise<unknown>) {
    const saleRedis = new SaleState(w.redis, w.keys);
    const realBalances = saleRedis.balances.bind(saleRedis);
    let looked = false;
    jest.spyOn(saleRedis, 'balances').mockImplementation(async (sale) => {
      const seen = await realBalances(sale);
      if (!looked) {
        looked = true;
        await meanwhile();
      }
      return seen;
    });
    return processLeases(new ReservationScripts(w.redis, w.keys), saleRedis);
  }

  it('is not sold out while a lease recorded before its look lands in another bucket during it', async () => {
    // Stock 3 on 2 buckets, leases of 1: a unit in each bucket, the last one in MySQL.
    const saleId = await createLiveSale(w.db, w.scripts, w.saleRedis, { stock: 3, buckets: 2, leaseSize: 1 });
    const sale: SaleLayout = { id: saleId, buckets: 2 };
    expect(await w.saleRedis.balances(sale)).toEqual([1, 1]);
    expect(await reserve(sale, buyerOf(sale, 0, 'first'))).toBe('reserved');
    expect(await reserve(sale, buyerOf(sale, 1, 'second'))).toBe('reserved');
    expect(await w.saleRedis.balances(sale)).toEqual([0, 0]);

    // Process P tops bucket 1 up with MySQL's last unit: the lease is recorded, its grant waits.
    const p = gatedGrants();
    const topUp = p.leases.topUp(saleId, 1);
    await p.leaseRecorded;
    const [pending] = await new StockLeaseRepository(w.db).leasesOf(saleId, 1, 'PENDING');
    expect(pending).toMatchObject({ bucket: 1, units: 1 });

    // A buyer of bucket 0 is refused, and process Q refills that bucket. P's grant lands (and is marked)
    // right after Q has read the buckets' balances.
    const buyer = buyerOf(sale, 0, 'third');
    expect(await reserve(sale, buyer)).toBe('SOLD_OUT');
    const q = leasesLookingWhile(async () => {
      p.openGate();
      expect(await topUp).toBe(1);
    });
    const refilled = await q.refill(sale, 0, 1);
    expect(await w.saleRedis.balances(sale)).toEqual([0, 1]);
    // A unit was on its way the whole time: "try again", never "sold out".
    expect(refilled).toBeGreaterThan(0);

    // The buyer's next try is refused by their empty bucket; the refill then brings bucket 1's unit over.
    expect(await reserve(sale, buyer)).toBe('SOLD_OUT');
    expect(await q.refill(sale, 0, 1)).toBe(1);
    expect(await reserve(sale, buyer)).toBe('reserved');

    // Now nothing is left anywhere and nothing moves: the refill says so.
    const last = buyerOf(sale, 1, 'fourth');
    expect(await reserve(sale, last)).toBe('SOLD_OUT');
    expect(await processLeases(w.scripts, w.saleRedis).refill(sale, 1, 1)).toBe(0);
  });

  it('with one bucket, is not sold out while a lease recorded before its look is still on its way', async () => {
    // Stock 2 on one bucket, leases of 1: a unit in Redis, the last one in MySQL.
    const saleId = await createLiveSale(w.db, w.scripts, w.saleRedis, { stock: 2, leaseSize: 1 });
    const sale: SaleLayout = { id: saleId, buckets: 1 };
    expect(await reserve(sale, 'first')).toBe('reserved');

    // Process P tops the bucket up with the last unit; its grant waits while a buyer is refused.
    const p = gatedGrants();
    const topUp = p.leases.topUp(saleId, 0);
    await p.leaseRecorded;
    expect(await reserve(sale, 'second')).toBe('SOLD_OUT');
    const q = processLeases(new ReservationScripts(w.redis, w.keys), w.saleRedis);
    expect(await q.leasesOnTheirWay(saleId)).toBe(1);
    // MySQL has nothing left to lease, yet a unit is on its way: "try again", never "sold out".
    expect(await q.refill(sale, 0, 1)).toBeGreaterThan(0);

    p.openGate();
    expect(await topUp).toBe(1);
    expect(await q.leasesOnTheirWay(saleId)).toBe(0);
    expect(await reserve(sale, 'second')).toBe('reserved');
    expect(await reserve(sale, 'third')).toBe('SOLD_OUT');
    expect(await q.refill(sale, 0, 1)).toBe(0);
  });

  it('sees a give-back not yet applied after Redis restarted without its data (MySQL keeps older ones)', async () => {
    const server = await PrivateRedisServer.start();
    const own = openSaleRedis({ ...w.testEnv.config.redis, url: server.url });
    const repository = new StockLeaseRepository(w.db);
    try {
      // Stock 2 on 2 buckets, leases of 1: a unit in each bucket.
      const saleId = await createLiveSale(w.db, own.scripts, own.saleRedis, { stock: 2, buckets: 2, leaseSize: 1 });
      const sale: SaleLayout = { id: saleId, buckets: 2 };
      const leases = processLeases(own.scripts, own.saleRedis, repository);
      // Bucket 0's buyer takes its unit; the next one is served by bucket 1's, given back and leased again.
      expect(await reserve(sale, buyerOf(sale, 0, 'first'), own)).toBe('reserved');
      expect(await reserve(sale, buyerOf(sale, 0, 'second'), own)).toBe('SOLD_OUT');
      expect(await leases.refill(sale, 0, 1)).toBe(1);
      expect(await repository.appliedReturnKeys(saleId)).toHaveProperty('size', 1);

      // Redis restarts without its data: the sale starts its next incarnation, its units settle back to
      // MySQL (as reconciliation does once their grace has passed), and each bucket is leased one again.
      await server.kill();
      await server.restart();
      expect(await leases.ensureLoaded(saleId)).toBe('opened');
      expect(await repository.settle(saleId)).toBe(2);
      for (const bucket of [0, 1]) expect(await leases.topUp(saleId, bucket)).toBe(1);
      expect(await reserve(sale, buyerOf(sale, 0, 'third'), own)).toBe('reserved');

      // Process X takes bucket 1's unit back for a buyer of bucket 0, and dies before MySQL applies it:
      // the units are in the bucket's hand-off stream, in no bucket and not in MySQL.
      const dying = new StockLeaseRepository(w.db);
      jest.spyOn(dying, 'applyGiveBack').mockRejectedValue(new Error('process X died'));
      const x = processLeases(new ReservationScripts(own.redis, own.keys), own.saleRedis, dying);
      await expect(x.refill(sale, 0, 1)).rejects.toThrow('process X died');
      expect(await own.saleRedis.balances(sale)).toEqual([0, 0]);

      // Redis remembers one give-back, MySQL applied one (another, from before the restart): not the same.
      const buyer = buyerOf(sale, 1, 'fourth');
      expect(await reserve(sale, buyer, own)).toBe('SOLD_OUT');
      expect(await leases.refill(sale, 1, 1)).toBeGreaterThan(0);

      // A worker applies it from the stream; the unit then reaches the buyer.
      const [recorded] = [...(await own.saleRedis.snapshot(sale)).givebacks];
      const [returnKey, given] = recorded!;
      await repository.applyGiveBack(saleId, { returnKey, bucket: 1, ...given });
      expect(await leases.refill(sale, 1, 1)).toBe(1);
      expect(await reserve(sale, buyer, own)).toBe('reserved');
    } finally {
      own.redis.disconnect();
      await server.destroy();
    }
  });
});
