import type { SaleStrategy } from '@flash-sale/contract';
import { waitFor } from '../support/fixtures';
import { useStackWorld } from '../support/stack-world';

/**
 * An oversold naive-unsafe sale (oversold on purpose, to show what the guards prevent) must still let
 * its unpaid orders expire on time — returning only what the sale can hold, since the surplus never
 * existed — and must not delay another sale's expiries.
 */
describe('expiry of an oversold naive-unsafe sale (real API, worker, Redis, MariaDB)', () => {
  const w = useStackWorld({ database: true, env: { EXPIRY_SWEEP_INTERVAL_MS: '200' } });

  it('its unpaid orders expire on time, and another sale’s expire on time beside it', async () => {
    const { stack, db, admin } = w;
    const create = async (strategy: SaleStrategy, stock: number) =>
      (
        await stack.client.createSale(admin, {
          name: strategy,
          priceCents: 100,
          stock,
          strategy,
          paymentTimeoutSeconds: 10,
        })
      ).id;
    const naive = await create('naive-unsafe', 10);
    const other = await create('redis-lua', 5);
    const buy = async (saleId: string) => {
      const guest = await stack.client.guest();
      const token = await stack.client.submitToken(saleId, guest.token);
      return stack.client.call('POST', `/api/sales/${saleId}/purchase`, { token: guest.token, json: { token } });
    };
    // Tokens first, then every purchase at once: the unguarded read-check-write oversells.
    const naiveAnswers = await Promise.all(Array.from({ length: 60 }, () => buy(naive)));
    const sold = naiveAnswers.filter((answer) => answer.status === 201).length;
    expect(sold).toBeGreaterThan(10);
    expect((await buy(other)).status).toBe(202);
    const boughtAt = Date.now();

    const statusCounts = async (saleId: string) =>
      Object.fromEntries(
        (
          (await db.query('SELECT status, COUNT(*) AS n FROM orders WHERE sale_id = ? GROUP BY status', [saleId])) as {
            status: string;
            n: string;
          }[]
        ).map((row) => [row.status, Number(row.n)]),
      );
    // Deadline 10 s after each purchase; the sweep runs every 200 ms.
    await waitFor(
      'every order of both sales expired',
      async () => ({ naive: await statusCounts(naive), other: await statusCounts(other) }),
      (counts) => counts.naive['EXPIRED'] === sold && counts.other['EXPIRED'] === 1,
      20_000,
    );
    expect(Date.now() - boughtAt).toBeLessThan(14_000);
    // Only what the sale can hold came back: never more than its stock.
    const [row] = (await db.query('SELECT available, leased, stock FROM sales WHERE id = ?', [naive])) as {
      available: number;
      leased: number;
      stock: number;
    }[];
    expect(Number(row!.available)).toBe(10);
    expect(Number(row!.leased)).toBe(0);
  });
});
