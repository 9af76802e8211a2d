import { OrdersQueue } from '@flash-sale/queue';
import { inBatches } from '../support/api-client';
import { countRows, waitFor } from '../support/fixtures';
import { useStackWorld } from '../support/stack-world';

interface Accepted {
  orderNo: string;
  status: string;
}
interface ErrorBody {
  error: { code: string };
}

describe('purchase through HTTP with the worker running (real MariaDB, Redis, BullMQ)', () => {
  const w = useStackWorld({ database: true });

  it('2,000 concurrent purchases from 1,500 users on stock 500 → exactly 500 orders, audit ok', async () => {
    const saleId = (await w.stack.client.createSale(w.admin, { name: 'Burst sale', priceCents: 1999, stock: 500 })).id;
    const users = await w.stack.client.guests(1500, 64);
    // 500 users come with two submit tokens (a second tab), the other 1,000 with one: 2,000 attempts.
    const attempts = await inBatches(
      users.flatMap((user, i) => (i < 500 ? [user, user] : [user])),
      64,
      async (user) => ({ user, submitToken: await w.stack.client.submitToken(saleId, user.token) }),
    );
    expect(attempts).toHaveLength(2000);

    // The burst: every purchase in flight at once. A `503` + retry-after means "nothing happened, send it
    // again" (units were still moving between a sale's buckets, say): resent, as the storefront does.
    const responses = await Promise.all(
      attempts.map(({ user, submitToken }) =>
        w.stack.client.purchaseAsStorefront<Accepted | ErrorBody>(saleId, user.token, submitToken),
      ),
    );

    const accepted = responses.filter((response) => response.status === 202);
    expect(accepted).toHaveLength(500);
    for (const response of responses) {
      if (response.status === 202) continue;
      const refusal = `${response.status} ${(response.body as ErrorBody).error.code}`;
      expect(['410 SOLD_OUT', '409 LIMIT_REACHED']).toContain(refusal);
    }
    const orderNos = accepted.map((response) => (response.body as Accepted).orderNo);
    expect(new Set(orderNos).size).toBe(500);

    await waitFor(
      'the queue to drain into MySQL',
      () => countRows(w.db, 'SELECT COUNT(*) AS n FROM orders WHERE sale_id = ?', [saleId]),
      (n) => n >= 500,
    );
    expect(
      await countRows(w.db, `SELECT COUNT(*) AS n FROM orders WHERE sale_id = ? AND status = 'PENDING_PAYMENT'`, [
        saleId,
      ]),
    ).toBe(500);
    expect(await countRows(w.db, 'SELECT COUNT(DISTINCT order_no) AS n FROM orders WHERE sale_id = ?', [saleId])).toBe(
      500,
    );
    expect(await countRows(w.db, 'SELECT COUNT(DISTINCT user_id) AS n FROM orders WHERE sale_id = ?', [saleId])).toBe(
      500,
    );
    expect(await countRows(w.db, 'SELECT available AS n FROM sales WHERE id = ?', [saleId])).toBe(0);

    const sale = await w.stack.client.call<{ remaining: number; status: string }>('GET', `/api/sales/${saleId}`);
    expect(sale.body).toMatchObject({ remaining: 0, status: 'sold_out' });

    const audit = await w.stack.client.call<Record<string, unknown>>('GET', `/api/admin/sales/${saleId}/audit`, {
      token: w.admin,
    });
    expect(audit.status).toBe(200);
    expect(audit.body).toMatchObject({
      stock: 500,
      remaining: 0,
      held: 500,
      oversold: 0,
      duplicateOrders: 0,
      lostReservations: 0,
      ok: true,
      ordersByStatus: { QUEUED: 0, PENDING_PAYMENT: 500, PAID: 0, CANCELLED: 0, EXPIRED: 0, FAILED: 0 },
    });

    // A replayed token returns the same order number and changes nothing.
    const winnerIndex = responses.findIndex((response) => response.status === 202);
    const winner = attempts[winnerIndex]!;
    const replay = await w.stack.client.call<Accepted>('POST', `/api/sales/${saleId}/purchase`, {
      token: winner.user.token,
      json: { token: winner.submitToken },
    });
    expect(replay.status).toBe(202);
    // The same order, as it is now: written by the worker meanwhile, or not yet.
    expect(replay.body.orderNo).toBe((responses[winnerIndex]!.body as Accepted).orderNo);
    expect(['QUEUED', 'PENDING_PAYMENT']).toContain(replay.body.status);
    expect(await countRows(w.db, 'SELECT COUNT(*) AS n FROM orders WHERE sale_id = ?', [saleId])).toBe(500);
  });

  it('an order is QUEUED until the worker writes it, then PENDING_PAYMENT; only its owner (or an admin) sees it', async () => {
    const saleId = (await w.stack.client.createSale(w.admin, { name: 'Burst sale', priceCents: 1999, stock: 3 })).id;
    const buyer = await w.stack.client.guest('Ada');
    const stranger = await w.stack.client.guest();
    // Pause the orders queue so the reservation stays unwritten for a moment.
    const ordersQueue = w.stack.worker!.get(OrdersQueue).queue;
    await ordersQueue.pause();
    let orderNo: string;
    try {
      const purchase = await w.stack.client.call<Accepted>('POST', `/api/sales/${saleId}/purchase`, {
        token: buyer.token,
        json: { token: await w.stack.client.submitToken(saleId, buyer.token), quantity: 1 },
      });
      expect(purchase.status).toBe(202);
      orderNo = purchase.body.orderNo;
      const queued = await w.stack.client.call<{ status: string }>('GET', `/api/orders/${orderNo}`, {
        token: buyer.token,
      });
      expect(queued.body).toMatchObject({ orderNo, saleId, status: 'QUEUED', quantity: 1, amountCents: 1999 });
      const list = await w.stack.client.call<{ orderNo: string; status: string }[]>('GET', '/api/orders', {
        token: buyer.token,
      });
      expect(list.body).toEqual([expect.objectContaining({ orderNo, status: 'QUEUED' })]);
    } finally {
      await ordersQueue.resume();
    }
    const written = await w.stack.client.orderWritten(orderNo, buyer.token);
    expect(written.body).toMatchObject({ orderNo, status: 'PENDING_PAYMENT', userId: buyer.userId });
    expect((await w.stack.client.call('GET', `/api/orders/${orderNo}`, { token: stranger.token })).status).toBe(404);
    expect((await w.stack.client.call('GET', `/api/orders/${orderNo}`, { token: w.admin })).status).toBe(200);
    const strangersList = await w.stack.client.call<unknown[]>('GET', '/api/orders', { token: stranger.token });
    expect(strangersList.body).toEqual([]);
  });
});
