import { StockLeaseRepository } from '@flash-sale/db';
import { bucketsOf, ReservationScripts, SaleState } from '@flash-sale/redis';
import { StockReconciliation } from '../../apps/worker/src/lifecycle/stock-reconciliation';
import { inBatches } from '../support/api-client';
import { waitFor } from '../support/fixtures';
import { useStackWorld } from '../support/stack-world';

/**
 * Stock segments (seed 004) with leases: Redis is refilled from MySQL before it runs dry, and a buyer
 * is told SOLD_OUT only once MySQL has nothing left to lease.
 */
describe('lease refill under a burst (real API, worker, Redis, MariaDB)', () => {
  const w = useStackWorld({ database: true, env: { LEASE_SIZE: '20', LEASE_LOW_WATER: '4' } });

  it('2,000 buyers, stock 800, leases of 20: exactly 800 sold, no SOLD_OUT while MySQL had units', async () => {
    const { stack, db, admin } = w;
    const sale = await stack.client.createSale(admin, { name: 'Segments', priceCents: 100, stock: 800 });
    const saleId = sale.id;
    // Tokens first, so the purchases themselves arrive as one burst.
    const buyers = await inBatches(
      Array.from({ length: 2000 }, (_, i) => i),
      64,
      async () => {
        const guest = await stack.client.guest();
        return { guest, token: await stack.client.submitToken(saleId, guest.token) };
      },
    );
    const answers = await inBatches(buyers, 64, async ({ guest, token }) => {
      // A 503 with retry-after means "nothing happened": like the storefront, the buyer resends.
      const response = await stack.client.purchaseAsStorefront(saleId, guest.token, token);
      return { status: response.status, code: response.body.error?.code, at: Date.now() };
    });

    expect(answers.filter((answer) => answer.status === 202)).toHaveLength(800);
    const refused = answers.filter((answer) => answer.status !== 202);
    expect(refused.every((answer) => answer.status === 410 && answer.code === 'SOLD_OUT')).toBe(true);
    // Each refusal is checked against MySQL: MySQL's last units went to Redis with the last lease, so
    // no SOLD_OUT may have been answered before that lease was committed.
    const [lastLease] = (await db.query(
      `SELECT UNIX_TIMESTAMP(MAX(created_at)) * 1000 AS at, COUNT(*) AS leases FROM stock_leases WHERE sale_id = ?`,
      [saleId],
    )) as { at: string; leases: string }[];
    expect(Number(lastLease!.leases)).toBeGreaterThanOrEqual(40);
    const earlyRefusals = refused.filter((answer) => answer.at < Number(lastLease!.at));
    expect(earlyRefusals).toEqual([]);

    const audit = await waitFor(
      'the orders written',
      async () =>
        (
          await stack.client.call<{ ok: boolean; held: number; oversold: number; leases: Record<string, number> }>(
            'GET',
            `/api/admin/sales/${saleId}/audit`,
            { token: admin },
          )
        ).body,
      (report) => report.held === 800,
      30_000,
    );
    expect(audit).toMatchObject({ ok: true, oversold: 0, leases: { converted: 800, inDoubt: 0 } });
    // Every unit was leased once, or again after a bucket gave it back (sales with several buckets).
    expect(audit.leases['granted']! - audit.leases['returned']!).toBe(800);
  });
});

describe('a lease caught between its Redis grant and its MySQL mark (real worker, Redis, MariaDB)', () => {
  const w = useStackWorld({
    database: true,
    // Reconciliation only when the test calls it.
    env: { LEASE_SIZE: '10', LEASE_LOW_WATER: '2', RECONCILE_INTERVAL_MS: '3600000' },
  });

  it('reconciliation does not take it for a lost grant and lease again: the rest stays with MySQL', async () => {
    const { stack, db, admin } = w;
    const sale = await stack.client.createSale(admin, { name: 'In flight', priceCents: 100, stock: 100 });
    const saleId = sale.id;
    const layout = { id: saleId, buckets: sale.buckets };
    const books = async () =>
      (
        (await db.query('SELECT available, leased, redis_epoch FROM sales WHERE id = ?', [saleId])) as {
          available: number;
          leased: number;
          redis_epoch: number;
        }[]
      )[0]!;
    const before = await books(); // the first lease, made when the sale was created
    // An API instance takes the next lease and grants it in Redis, and has not marked it GRANTED yet.
    const repository = stack.worker!.get(StockLeaseRepository);
    const lease = (await repository.lease(saleId, Number(before.redis_epoch), 10))!;
    expect(
      (
        await stack
          .worker!.get(ReservationScripts)
          .grantLease(bucketsOf(layout)[lease.bucket]!, lease.epoch, lease.leaseId, lease.units)
      ).kind,
    ).toBe('granted');

    await stack.worker!.get(StockReconciliation).reconcile(saleId);
    // Nothing was repaired, so nothing more was leased: MySQL keeps every unit Redis was not given.
    const after = await books();
    expect(Number(after.leased)).toBe(Number(before.leased) + 10);
    expect(Number(after.available)).toBe(Number(before.available) - 10);
    expect(await stack.worker!.get(SaleState).remaining(layout)).toBe(Number(after.leased));
  });
});
