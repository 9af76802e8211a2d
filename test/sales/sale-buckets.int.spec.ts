import { SaleLayouts, StockLeaseRepository } from '@flash-sale/db';
import type { SaleLayout } from '@flash-sale/domain';
import { bucketsOf, buyerBucket, HandoffStream, KeyBuilder, ReservationScripts, SaleState } from '@flash-sale/redis';
import { HandoffSweep } from '../../apps/worker/src/lifecycle/handoff-sweep';
import { inBatches } from '../support/api-client';
import { waitFor } from '../support/fixtures';
import { useStackWorld } from '../support/stack-world';

interface AuditBody {
  ok: boolean;
  oversold: number;
  drift: number;
  held: number;
  lostReservations: number;
  leases: { granted: number; returned: number; converted: number; outstanding: number };
}

/**
 * A hot sale spread over three buckets (docs/architecture.md "Hot sales: buckets"): each buyer's records
 * live in one bucket, and a buyer whose bucket ran dry is served by the units of the others (given back
 * to MySQL, leased again) before anyone is told SOLD_OUT.
 */
describe('a sale spread over buckets (real API, worker, Redis, MariaDB)', () => {
  // Leases of 10: the 30 units go out as 10 per bucket, so buyers of one bucket must reach the others.
  const w = useStackWorld({ env: { LEASE_SIZE: '10', LEASE_LOW_WATER: '0' }, database: true, saleRedis: true });

  async function hotSaleOverThreeBuckets(stock: number, perUserLimit = 1): Promise<SaleLayout> {
    const sale = await w.stack.client.createSale(w.admin, {
      name: 'Hot',
      priceCents: 100,
      stock,
      perUserLimit,
      buckets: 3,
    });
    expect(sale.buckets).toBe(3);
    return { id: sale.id, buckets: sale.buckets };
  }

  async function audit(saleId: string): Promise<AuditBody> {
    return (await w.stack.client.call<AuditBody>('GET', `/api/admin/sales/${saleId}/audit`, { token: w.admin })).body;
  }

  /** Guests until `count` of them are buyers of the given bucket. */
  async function guestsOfBucket(sale: SaleLayout, index: number, count: number) {
    const guests: { token: string; userId: string }[] = [];
    while (guests.length < count) {
      const batch = await Promise.all(Array.from({ length: 16 }, () => w.stack.client.guest()));
      guests.push(...batch.filter((guest) => buyerBucket(sale, guest.userId).index === index));
    }
    return guests.slice(0, count);
  }

  it('refuses buckets for a MySQL-only strategy, and out of range', async () => {
    const endsAt = new Date(Date.now() + 3_600_000).toISOString();
    for (const json of [
      { name: 'x', priceCents: 1, stock: 1, endsAt, strategy: 'db-optimistic', buckets: 2 },
      { name: 'x', priceCents: 1, stock: 1, endsAt, buckets: 0 },
      { name: 'x', priceCents: 1, stock: 1, endsAt, buckets: 17 },
    ]) {
      const response = await w.stack.client.call<{ error: { code: string } }>('POST', '/api/admin/sales', {
        token: w.admin,
        json,
      });
      expect([response.status, response.body.error.code]).toEqual([400, 'VALIDATION_FAILED']);
    }
  });

  it('sells every unit to the buyers of one bucket (the others give theirs back), then SOLD_OUT; books balance', async () => {
    const sale = await hotSaleOverThreeBuckets(30);
    const redisRepository = w.stack.worker!.get(SaleState);
    const handoff = w.stack.worker!.get(HandoffStream);
    // Every bucket was leased a share of what MySQL had left; the rest waits in MySQL.
    const leased = await redisRepository.balances(sale);
    expect(leased.every((balance) => balance! > 0 && balance! <= 10)).toBe(true);

    const buyers = await guestsOfBucket(sale, 0, 36);
    const answers = await inBatches(buyers, 12, async (guest) => {
      const token = await w.stack.client.submitToken(sale.id, guest.token);
      return (await w.stack.client.purchaseAsStorefront(sale.id, guest.token, token)).status;
    });
    expect(answers.filter((status) => status === 202)).toHaveLength(30);
    expect(answers.filter((status) => status === 410)).toHaveLength(6);

    const books = await waitFor(
      'every order written and every give-back applied',
      () => audit(sale.id),
      (body) => body.held === 30,
    );
    expect(books).toMatchObject({ ok: true, oversold: 0, drift: 0, lostReservations: 0 });
    // Every unit the other buckets held left them through give-backs and came back through leases.
    expect(books.leases.returned).toBe(leased[1]! + leased[2]!);
    expect(books.leases.granted - books.leases.returned).toBe(30);
    expect(await redisRepository.balances(sale)).toEqual([0, 0, 0]);
    // Each give-back is applied once, whoever applied it (the API at once, the worker from the stream).
    const applied = await w.stack.worker!.get(StockLeaseRepository).appliedReturnKeys(sale.id);
    expect(new Set(await redisRepository.giveBackKeys(sale))).toEqual(applied);
    await waitFor(
      'the streams written',
      () => handoff.backlog(sale),
      (n) => n === 0,
    );
  });

  it('keeps the per-user limit exact: a buyer retrying with fresh tokens holds at most the limit', async () => {
    const sale = await hotSaleOverThreeBuckets(60, 2);
    const buyers = await Promise.all(Array.from({ length: 20 }, () => w.stack.client.guest()));
    const answers = (
      await Promise.all(
        buyers.map((guest) =>
          Promise.all(Array.from({ length: 4 }, async () => (await w.stack.client.buy(sale.id, guest.token)).status)),
        ),
      )
    ).flat();
    expect(answers.filter((status) => status === 202)).toHaveLength(40);
    expect(answers.filter((status) => status !== 202).every((status) => status === 409)).toBe(true);
    await waitFor(
      'the orders written',
      () => audit(sale.id),
      (body) => body.held === 40,
    );
    const perBuyer = (await w.db.query(
      `SELECT user_id, SUM(quantity) AS units FROM orders WHERE sale_id = ? GROUP BY user_id`,
      [sale.id],
    )) as { units: string }[];
    expect(perBuyer.every((row) => Number(row.units) === 2)).toBe(true);
    expect(await audit(sale.id)).toMatchObject({ ok: true, drift: 0 });
  });

  it('a give-back whose API died before telling MySQL is applied by a worker from the stream', async () => {
    const sale = await hotSaleOverThreeBuckets(30);
    const [donor] = bucketsOf(sale).slice(1);
    const epoch = Number(
      ((await w.db.query('SELECT redis_epoch FROM sales WHERE id = ?', [sale.id])) as { redis_epoch: number }[])[0]!
        .redis_epoch,
    );
    const before = Number(
      ((await w.db.query('SELECT available FROM sales WHERE id = ?', [sale.id])) as { available: number }[])[0]!
        .available,
    );
    // The script ran (units out of the bucket, recorded, handed off); MySQL was never told.
    const given = await w.stack.worker!.get(ReservationScripts).giveBack(donor!, epoch, `${sale.id}:crash`, 4);
    expect(given).toMatchObject({ kind: 'given-back', units: 4 });
    // In transit, the units are not missing: the books count them as on their way to MySQL.
    expect(await audit(sale.id)).toMatchObject({ ok: true, drift: 0 });
    // The sweep finds the bucket's stream non-empty and wakes its writer.
    const keys = new KeyBuilder(w.testEnv.config.redis.keyPrefix);
    expect(await w.redis.xlen(keys.bucket(donor!).handoff)).toBe(1);
    await w.stack.worker!.get(SaleLayouts).of(sale.id);
    await w.stack.worker!.get(HandoffSweep).run();
    await waitFor(
      'the give-back applied',
      async () =>
        Number(
          ((await w.db.query('SELECT available FROM sales WHERE id = ?', [sale.id])) as { available: number }[])[0]!
            .available,
        ),
      (available) => available === before + 4,
    );
    expect(await audit(sale.id)).toMatchObject({ ok: true, drift: 0 });
    // A replay of the same give-back changes nothing.
    expect(await w.stack.worker!.get(ReservationScripts).giveBack(donor!, epoch, `${sale.id}:crash`, 4)).toEqual({
      kind: 'given-back-before',
      units: 4,
    });
  });
});
