import { inBatches } from '../support/api-client';
import { countRows } from '../support/fixtures';
import { useLifecycleWorld } from './lifecycle-world';

/** Payment (the owner's, the provider's racing callbacks, forged callbacks) and cancellation, end to end. */
describe('order payment and cancellation (real API, worker, MariaDB, Redis)', () => {
  const w = useLifecycleWorld();
  const { audit, available, buy, buyWritten, cancel, createSale, pay, signedCallback, statusOf } = w;

  it('pay twice, and callbacks racing for one order → PAID once, one payment row', async () => {
    const saleId = await createSale(5);
    const buyer = await w.stack.client.guest();
    const orderNo = await buyWritten(saleId, buyer);

    const first = await pay(buyer, orderNo);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ orderNo, status: 'PAID', paidAt: expect.any(String) });
    const again = await pay(buyer, orderNo);
    expect(again.body).toEqual(first.body); // harmless repeat

    const [payment] = (await w.db.query(
      'SELECT out_trade_no, transaction_id, amount_cents FROM payments WHERE order_no = ?',
      [orderNo],
    )) as { out_trade_no: string; transaction_id: string; amount_cents: number }[];
    const callback = {
      outTradeNo: payment!.out_trade_no,
      transactionId: payment!.transaction_id,
      amountCents: payment!.amount_cents,
      status: 'SUCCESS',
    };
    const racing = await Promise.all(Array.from({ length: 8 }, () => signedCallback(callback)));
    expect(racing.map((response) => response.status)).toEqual(Array(8).fill(200));
    expect(racing.map((response) => (response.body as { outcome: string }).outcome)).toEqual(
      Array(8).fill('duplicate'),
    );

    // The provider's own late duplicates arrive too; none changes anything.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await countRows(w.db, 'SELECT COUNT(*) AS n FROM payments WHERE order_no = ?', [orderNo])).toBe(1);
    const [order] = (await w.db.query('SELECT status, version FROM orders WHERE order_no = ?', [orderNo])) as {
      status: string;
      version: number;
    }[];
    expect(order).toEqual({ status: 'PAID', version: 1 }); // moved exactly once
    expect(await available(saleId)).toBe(4);
  });

  it('a callback with a bad signature → 401, nothing changes', async () => {
    const saleId = await createSale(5);
    const buyer = await w.stack.client.guest();
    const orderNo = await buyWritten(saleId, buyer);
    await w.db.query(
      `INSERT INTO payments (order_no, out_trade_no, amount_cents, status) VALUES (?, ?, 2500, 'PENDING')`,
      [orderNo, `PAY-${orderNo}`],
    );
    const body = { outTradeNo: `PAY-${orderNo}`, transactionId: 'txn_forged', amountCents: 2500, status: 'SUCCESS' };
    const forged = await signedCallback(body, 'not-the-secret');
    expect(forged.status).toBe(401);
    expect(forged.body.error.code).toBe('INVALID_SIGNATURE');
    const unsigned = await w.stack.client.call('POST', '/api/payments/callback', { json: body });
    expect(unsigned.status).toBe(401);
    expect(await statusOf(orderNo)).toBe('PENDING_PAYMENT');
    expect(
      await countRows(w.db, `SELECT COUNT(*) AS n FROM payments WHERE order_no = ? AND transaction_id IS NULL`, [
        orderNo,
      ]),
    ).toBe(1);
  });

  it('cancel → another user can buy that very unit; the canceller can buy again', async () => {
    const saleId = await createSale(1);
    const [alice, bob] = [await w.stack.client.guest('Alice'), await w.stack.client.guest('Bob')];
    const aliceOrder = await buyWritten(saleId, alice);
    expect((await buy(saleId, bob)).status).toBe(410);

    expect((await cancel(bob, aliceOrder)).status).toBe(404); // not Bob's
    const cancelled = await cancel(alice, aliceOrder);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ orderNo: aliceOrder, status: 'CANCELLED' });
    expect((await pay(alice, aliceOrder)).status).toBe(409);

    const bobOrder = await buyWritten(saleId, bob);
    expect((await buy(saleId, alice)).status).toBe(410); // sold out again: Bob has the unit
    expect((await cancel(bob, bobOrder)).status).toBe(200);
    await buyWritten(saleId, alice); // the canceller buys again
    expect(await available(saleId)).toBe(0);
    expect((await audit(saleId)).body).toMatchObject({ ok: true, held: 1, drift: 0 });
  });

  it('cancel racing payment on 30 orders → exactly one wins each, stock conserved', async () => {
    const saleId = await createSale(30);
    const buyers = await w.stack.client.guests(30, 10);
    const orderNos = await inBatches(buyers, 10, (buyer) => buyWritten(saleId, buyer));

    const results = await Promise.all(
      orderNos.map((orderNo, i) => Promise.all([pay(buyers[i]!, orderNo), cancel(buyers[i]!, orderNo)])),
    );
    let paid = 0;
    for (const [i, [payment, cancelled]] of results.entries()) {
      const status = await statusOf(orderNos[i]!);
      expect(['PAID', 'CANCELLED']).toContain(status);
      if (status === 'PAID') {
        paid += 1;
        expect(payment.status).toBe(200);
        expect(cancelled.status).toBe(409);
      } else {
        expect(payment.status).toBe(409);
        expect(cancelled.status).toBe(200);
      }
    }
    expect(await available(saleId)).toBe(30 - paid);
    expect(await w.saleRedis.remaining(await w.layout(saleId))).toBe(30 - paid);
    const report = await audit(saleId);
    expect(report.body).toMatchObject({ ok: true, held: paid, drift: 0 });
  });
});
