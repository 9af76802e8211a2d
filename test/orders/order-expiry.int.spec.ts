import { OrderLifecycle } from '@flash-sale/stock';
import { OrderExpiry } from '../../apps/worker/src/lifecycle/order-expiry';
import { inBatches } from '../support/api-client';
import { countRows, waitFor } from '../support/fixtures';
import { useLifecycleWorld } from './lifecycle-world';

/** Unpaid orders expire on time, exactly once, against payments racing them. */
describe('order expiry (real API, worker, MariaDB, Redis)', () => {
  const w = useLifecycleWorld();
  const { audit, available, buy, buyWritten, createSale, pay, statusOf } = w;

  it('expiry returns the unit to MySQL and Redis once; paying afterwards → 409 INVALID_TRANSITION', async () => {
    const saleId = await createSale(2, 1);
    const buyer = await w.stack.client.guest();
    const orderNo = await buyWritten(saleId, buyer);
    expect(await w.saleRedis.remaining(await w.layout(saleId))).toBe(1);
    await waitFor(
      'the expiry sweep',
      () => statusOf(orderNo),
      (status) => status === 'EXPIRED',
      20_000,
    );
    await waitFor(
      'the unit back in Redis',
      async () => w.saleRedis.remaining(await w.layout(saleId)),
      (n) => n === 2,
      5_000,
    );
    expect(await available(saleId)).toBe(2);

    const late = await pay(buyer, orderNo);
    expect(late.status).toBe(409);
    expect(late.body.error.code).toBe('INVALID_TRANSITION');
    // Sweeping again gives nothing back twice, and expiring it again directly loses the compare-and-set.
    expect(await w.stack.worker!.get(OrderExpiry).sweep()).toBe(0);
    const expiredAgain = await w.stack
      .worker!.get(OrderLifecycle)
      .expireOverdue(saleId, [{ orderNo, userId: 'unused', version: 0, quantity: 1 }], new Date());
    expect(expiredAgain).toEqual([]);
    expect(await w.saleRedis.remaining(await w.layout(saleId))).toBe(2);
    expect(await available(saleId)).toBe(2);
    // The buyer's slot is free again.
    const again = await buy(saleId, buyer);
    expect(again.status).toBe(202);
    // Its one-second deadline passes too: the sweep expires it, so no order of this test is left due
    // for the next one's sweeps to count.
    await waitFor(
      'the second order expired',
      () => statusOf(again.body.orderNo),
      (status) => status === 'EXPIRED',
      20_000,
    );
  });

  it('the sweep racing payment on 30 overdue orders → exactly one wins each; nothing expires before its deadline', async () => {
    const saleId = await createSale(31);
    const buyers = await w.stack.client.guests(31, 10);
    const orderNos = await inBatches(buyers, 10, (buyer) => buyWritten(saleId, buyer));
    const [notDue, ...overdue] = orderNos;
    const expiry = w.stack.worker!.get(OrderExpiry);
    expect(await expiry.sweep()).toBe(0); // 600 s to pay: nothing is due yet

    // 30 deadlines pass at once; payments, a sweep run by hand and the scheduled sweep all race for them.
    await w.db.query(`UPDATE orders SET expires_at = ? WHERE order_no IN (${overdue.map(() => '?').join(', ')})`, [
      new Date(Date.now() - 1_000),
      ...overdue,
    ]);
    const [payments] = await Promise.all([
      Promise.all(overdue.map((orderNo, i) => pay(buyers[i + 1]!, orderNo))),
      expiry.sweep(),
    ]);
    await waitFor(
      'every overdue order paid or expired',
      () =>
        countRows(w.db, `SELECT COUNT(*) AS n FROM orders WHERE sale_id = ? AND status = 'PENDING_PAYMENT'`, [saleId]),
      (n) => n === 1,
    );
    let paid = 0;
    for (const [i, orderNo] of overdue.entries()) {
      const status = await statusOf(orderNo);
      expect(['PAID', 'EXPIRED']).toContain(status);
      if (status === 'PAID') paid += 1;
      expect(payments[i]!.status).toBe(status === 'PAID' ? 200 : 409);
    }
    expect(await statusOf(notDue!)).toBe('PENDING_PAYMENT');
    // Units held: the paid ones and the order not yet due; every expired one came back exactly once.
    const held = paid + 1;
    await waitFor(
      'expired units back in Redis',
      async () => w.saleRedis.remaining(await w.layout(saleId)),
      (n) => n === 31 - held,
      5_000,
    );
    expect(await available(saleId)).toBe(31 - held);
    expect(await expiry.sweep()).toBe(0);
    expect(await w.saleRedis.remaining(await w.layout(saleId))).toBe(31 - held);
    expect((await audit(saleId)).body).toMatchObject({ ok: true, held, drift: 0 });
  });
});
