import type { Audit, SaleStrategy } from '@flash-sale/contract';
import { waitFor } from '../support/fixtures';
import { useStackWorld } from '../support/stack-world';

/**
 * An audit that forgets is not an audit: an oversold sale whose orders all expire gives its units back,
 * but its audit, its metric and its verdict keep the oversell (`oversoldPeak`, docs/api.md `Audit`). A
 * guarded sale whose orders are cancelled and expired keeps a peak of 0.
 */
describe('the oversell outlives its orders (real API, worker, Redis, MariaDB)', () => {
  const w = useStackWorld({ database: true, env: { EXPIRY_SWEEP_INTERVAL_MS: '200' } });

  const create = async (strategy: SaleStrategy, stock: number) =>
    (
      await w.stack.client.createSale(w.admin, {
        name: `${strategy} peak`,
        priceCents: 100,
        stock,
        strategy,
        paymentTimeoutSeconds: 10,
      })
    ).id;
  const buy = async (saleId: string) => {
    const guest = await w.stack.client.guest();
    const token = await w.stack.client.submitToken(saleId, guest.token);
    const answer = await w.stack.client.call<{ orderNo: string }>('POST', `/api/sales/${saleId}/purchase`, {
      token: guest.token,
      json: { token },
    });
    return { ...answer, buyer: guest.token };
  };
  const audit = async (saleId: string) => {
    const answer = await w.stack.client.call<Audit>('GET', `/api/admin/sales/${saleId}/audit`, { token: w.admin });
    expect(answer.status).toBe(200);
    return answer.body;
  };
  const gauge = async (name: string, saleId: string) => {
    const text = (await w.stack.client.raw('GET', '/metrics')).text;
    const line = text.split('\n').find((l) => l.startsWith(`${name}{sale="${saleId}",`));
    return line === undefined ? undefined : Number(line.split(' ').at(-1));
  };
  const statusCount = async (saleId: string, status: string) => {
    const [row] = (await w.db.query('SELECT COUNT(*) AS n FROM orders WHERE sale_id = ? AND status = ?', [
      saleId,
      status,
    ])) as { n: string }[];
    return Number(row!.n);
  };

  it('an oversold sale whose every order expired still audits oversold, ok false, and its peak metric stays', async () => {
    const naive = await create('naive-unsafe', 10);
    // Tokens and purchases at once: the unguarded read-check-write oversells.
    const answers = await Promise.all(Array.from({ length: 60 }, () => buy(naive)));
    const sold = answers.filter((answer) => answer.status === 201).length;
    expect(sold).toBeGreaterThan(10);

    const during = await audit(naive);
    expect(during.oversold).toBe(sold - 10);
    expect(during.oversoldPeak).toBe(sold - 10);
    expect(during.ok).toBe(false);

    await waitFor(
      'every order expired',
      () => statusCount(naive, 'EXPIRED'),
      (expired) => expired === sold,
      25_000,
    );
    const after = await audit(naive);
    expect(after.held).toBe(0);
    expect(after.oversold).toBe(0);
    // Every order was written before the first expired: the sale held all of them at once.
    expect(after.oversoldPeak).toBe(sold - 10);
    expect(after.ok).toBe(false);
    expect(await gauge('flash_sale_oversold_units', naive)).toBe(0);
    expect(await gauge('flash_sale_oversold_peak_units', naive)).toBe(sold - 10);
  });

  it('an oversell no give-back has recorded yet (its orders still held) is recorded by the scrape, and outlives the sale’s window', async () => {
    const naive = await create('naive-unsafe', 5);
    const answers = await Promise.all(Array.from({ length: 40 }, () => buy(naive)));
    const accepted = answers.filter((answer) => answer.status === 201);
    expect(accepted.length).toBeGreaterThan(5);
    // No give-back happens: the scrape is what records the peak in MySQL.
    expect(await gauge('flash_sale_oversold_peak_units', naive)).toBe(accepted.length - 5);
    const [row] = (await w.db.query('SELECT oversold_peak FROM sales WHERE id = ?', [naive])) as {
      oversold_peak: number;
    }[];
    expect(Number(row!.oversold_peak)).toBe(accepted.length - 5);
    // Ended two hours ago: out of the recent sales' window, still in the peak's series.
    await w.db.query('UPDATE sales SET starts_at = ?, ends_at = ? WHERE id = ?', [
      new Date(Date.now() - 3 * 3_600_000),
      new Date(Date.now() - 2 * 3_600_000),
      naive,
    ]);
    expect(await gauge('flash_sale_oversold_peak_units', naive)).toBe(accepted.length - 5);
  });

  it('a guarded sale whose units go back by cancel and expiry keeps a peak of 0 and a clean audit', async () => {
    const guarded = await create('db-optimistic', 3);
    const answers = await Promise.all(Array.from({ length: 12 }, () => buy(guarded)));
    const accepted = answers.filter((answer) => answer.status === 201);
    expect(accepted).toHaveLength(3);
    const cancelled = accepted[0]!;
    const cancel = await w.stack.client.call('POST', `/api/orders/${cancelled.body.orderNo}/cancel`, {
      token: cancelled.buyer,
    });
    expect(cancel.status).toBe(200);
    // The unit that came back is sold again: stock held to the full, never beyond it.
    const again = await buy(guarded);
    expect(again.status).toBe(201);
    await waitFor(
      'every order left expired',
      () => statusCount(guarded, 'EXPIRED'),
      (expired) => expired === 3,
      25_000,
    );
    const after = await audit(guarded);
    expect(after.oversoldPeak).toBe(0);
    expect(after.ok).toBe(true);
    expect(await gauge('flash_sale_oversold_peak_units', guarded)).toBe(0);
  });
});
