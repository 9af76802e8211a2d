import type { SaleDashboard } from '@flash-sale/contract';
import { waitFor } from '../support/fixtures';
import { useStackWorld } from '../support/stack-world';

/** `GET /api/admin/sales/:id/dashboard`: the admin console's one sample per second, from the real books. */
describe('admin dashboard sample (real API, worker, Redis, MariaDB)', () => {
  const w = useStackWorld();

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
      async () =>
        (await w.stack.client.call<SaleDashboard>('GET', `/api/admin/sales/${saleId}/dashboard`, { token: w.admin }))
          .body,
      // A worker acknowledges a batch's entries just after its commit: wait for both.
      (body) => body.audit.ordersByStatus['PENDING_PAYMENT'] === 3 && body.handoff.unwritten === 0,
    );
    expect(sample.sale).toMatchObject({ id: saleId, remaining: 2, status: 'live' });
    expect(sample.purchases).toBe(3);
    expect(sample.audit).toMatchObject({ ok: true, oversold: 0 });
    expect(sample.handoff).toEqual({ unwritten: 0, beingWritten: 0, failedJobs: 0 });
    expect(Date.parse(sample.sampledAt)).toBeGreaterThan(Date.now() - 60_000);
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
