import { waitFor } from '../support/fixtures';
import { useStackWorld } from '../support/stack-world';

/** Redis, which the purchase path needs, goes away and comes back (a private instance, not the shared one). */
describe('when Redis is down (real private redis-server, real MariaDB)', () => {
  // Without the fallback (test/outages/redis-outage.int.spec.ts covers it), Redis down means 503. Leases of
  // one unit: what Redis loses is one unit in doubt; MySQL still has the others to lease.
  const w = useStackWorld({ redis: 'private', worker: false, env: { REDIS_FALLBACK: 'off', LEASE_SIZE: '1' } });

  it('answers 503 UNAVAILABLE, then sells again once Redis is back — a new incarnation on fresh leases', async () => {
    const { stack, admin } = w;
    const sale = await stack.client.createSale(admin, { name: 'Fragile', priceCents: 100, stock: 3 });
    const buyer = await stack.client.guest();
    const token = await stack.client.submitToken(sale.id, buyer.token);

    await w.redisServer.kill();
    const refused = await stack.client.call<{ error: { code: string } }>('POST', `/api/sales/${sale.id}/purchase`, {
      token: buyer.token,
      json: { token },
    });
    expect(refused.status).toBe(503);
    expect(refused.body.error.code).toBe('UNAVAILABLE');

    // Back, but empty (no persistence): the next purchase loads a new incarnation of the sale, which
    // sells only a fresh lease — never the unit leased to the lost one, which Redis may have promised.
    await w.redisServer.restart();
    const accepted = await waitFor(
      'a purchase to go through',
      async () =>
        stack.client.call<{ status: string }>('POST', `/api/sales/${sale.id}/purchase`, {
          token: buyer.token,
          json: { token: await stack.client.submitToken(sale.id, buyer.token) },
        }),
      (response) => response.status === 202,
      20_000,
    );
    expect(accepted.body.status).toBe('QUEUED');
    // 3 units: 1 in doubt (the lost incarnation's lease; no worker here to settle it), 1 just sold, 1 left.
    // (The last unit is leased in the background once the balance runs low.)
    await waitFor(
      'the remaining count',
      async () => (await stack.client.call<{ remaining: number }>('GET', `/api/sales/${sale.id}`)).body.remaining,
      (remaining) => remaining === 1,
      5_000,
    );
    const audit = await stack.client.call<{ leases: { inDoubt: number; epoch: number } }>(
      'GET',
      `/api/admin/sales/${sale.id}/audit`,
      { token: admin },
    );
    expect(audit.body.leases).toMatchObject({ inDoubt: 1, epoch: 2 });
  });
});
