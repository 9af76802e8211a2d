import type { SaleDashboard } from '@flash-sale/contract';
import { waitFor } from '../support/fixtures';
import { useStackWorld } from '../support/stack-world';
import { RoomBuyer } from '../waiting-room/room-buyers';

/** `GET /api/admin/sales/:id/dashboard`: the admin console's one sample per second, from the real books. */
describe('admin dashboard sample (real API, worker, Redis, MariaDB)', () => {
  const w = useStackWorld();

  const dashboard = async (saleId: string) =>
    (await w.stack.client.call<SaleDashboard>('GET', `/api/admin/sales/${saleId}/dashboard`, { token: w.admin })).body;

  it('counts purchases, remaining, orders by status and the queue from what was really bought', async () => {
    const created = await w.stack.client.createSale(w.admin, { name: 'Dashboard sale', priceCents: 100, stock: 5 });
    const saleId = created.id;
    const buyers = await Promise.all([1, 2, 3].map(() => w.stack.client.guest()));
    const answers = await Promise.all(
      buyers.map(async (buyer) =>
        w.stack.client.call('POST', `/api/sales/${saleId}/purchase`, {
          token: buyer.token,
          json: { token: await w.stack.client.submitToken(saleId, buyer.token) },
        }),
      ),
    );
    expect(answers.map((answer) => answer.status)).toEqual([202, 202, 202]);

    const sample = await waitFor(
      'the three orders written and their hand-offs acknowledged',
      () => dashboard(saleId),
      // A worker acknowledges a batch's entries just after its commit: wait for both.
      (body) => body.audit.ordersByStatus['PENDING_PAYMENT'] === 3 && body.handoff.unwritten === 0,
    );
    expect(sample.sale).toMatchObject({ id: saleId, remaining: 2, status: 'live' });
    expect(sample.purchases).toBe(3);
    expect(sample.audit).toMatchObject({ ok: true, oversold: 0 });
    expect(sample.handoff).toEqual({ unwritten: 0, beingWritten: 0, failedJobs: 0 });
    expect(Date.parse(sample.sampledAt)).toBeGreaterThan(Date.now() - 60_000);
  });

  it('counts the funnel from the reservations to the payment, and times the reservations since the last sample', async () => {
    const { id: saleId } = await w.stack.client.createSale(w.admin, { name: 'Funnel sale', priceCents: 100, stock: 5 });
    const buyers = await Promise.all([1, 2, 3].map(() => w.stack.client.guest()));
    // The reservation latency is measured between two samples of the same API process: this is the first.
    await dashboard(saleId);
    const answers = await Promise.all(buyers.map((buyer) => w.stack.client.buy(saleId, buyer.token)));
    expect(answers.map((answer) => answer.status)).toEqual([202, 202, 202]);

    // Measured once that first reading is a second old.
    const timed = await waitFor(
      'the reservations timed',
      () => dashboard(saleId),
      (body) => body.reservationLatency !== undefined,
    );
    expect(timed.reservationLatency?.calls).toBeGreaterThanOrEqual(3);
    expect(timed.reservationLatency?.p50Ms).toBeGreaterThan(0);
    expect(timed.reservationLatency!.p99Ms).toBeGreaterThanOrEqual(timed.reservationLatency!.p50Ms!);

    const [payer] = buyers;
    const { orderNo } = answers[0]!.body;
    await w.stack.client.orderWritten(orderNo, payer!.token);
    const paid = await w.stack.client.callRetryingAfter('POST', `/api/orders/${orderNo}/pay`, { token: payer!.token });
    expect(paid.status).toBe(200);

    const sample = await waitFor(
      'the three orders written, one of them paid',
      () => dashboard(saleId),
      (body) => body.funnel?.written === 3,
    );
    // No waiting room: the funnel starts at the reservations.
    expect(sample.funnel).toEqual({ reserved: 3, written: 3, paid: 1 });
    expect(sample.purchases).toBe(3);
  });

  it("counts a room sale's buyers who joined its room and were admitted, then their orders", async () => {
    const { id: saleId } = await w.stack.client.createSale(w.admin, {
      name: 'Room funnel sale',
      priceCents: 100,
      stock: 5,
      waitingRoom: { admitPerSecond: 100 },
    });
    const [shopper, waiter] = await Promise.all([1, 2].map(() => w.stack.client.guest()));
    const buyer = new RoomBuyer(w.stack.client, saleId, shopper!);
    expect((await buyer.walk({ buy: true })).state).toBe('admitted');
    expect(buyer.orderNo).toBeDefined();
    // Joins and never polls again: a join admits only those already in line, so this buyer stays waiting.
    const joined = await new RoomBuyer(w.stack.client, saleId, waiter!).join();
    expect(joined.body.state).toBe('waiting');

    const sample = await waitFor(
      'the order written',
      () => dashboard(saleId),
      (body) => body.funnel?.written === 1,
    );
    expect(sample.funnel).toEqual({ joined: 2, admitted: 1, reserved: 1, written: 1, paid: 0 });
  });

  it('is for admins only, and names an unknown sale', async () => {
    const guest = await w.stack.client.guest();
    const asGuest = await w.stack.client.call<{ error: { code: string } }>('GET', '/api/admin/sales/1/dashboard', {
      token: guest.token,
    });
    expect(asGuest.status).toBe(403);
    expect((await w.stack.client.call('GET', '/api/admin/sales/1/dashboard')).status).toBe(401);
    const unknown = await w.stack.client.call<{ error: { code: string } }>('GET', '/api/admin/sales/999999/dashboard', {
      token: w.admin,
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('SALE_NOT_FOUND');
  });
});
