import type { ChildProcess } from 'node:child_process';
import { startStack, type RunningStack } from './support/running-stack';
import { createTestEnv, type TestEnv } from './support/test-env';
import { waitFor } from './support/fixtures';
import { freePort } from './support/free-port';
import { redisAnswers, startPrivateRedis } from './support/private-redis';

/** Redis, which the purchase path needs, goes away and comes back (a private instance, not the shared one). */
describe('when Redis is down (real private redis-server, real MariaDB)', () => {
  let port: number;
  let redis: ChildProcess;
  let testEnv: TestEnv;
  let stack: RunningStack;

  beforeAll(async () => {
    port = await freePort();
    redis = startPrivateRedis(port);
    // Without the fallback (test/redis-fallback.int.spec.ts covers it), Redis down means 503. Leases of
    // one unit: what Redis loses is one unit in doubt; MySQL still has the others to lease.
    testEnv = await createTestEnv({ REDIS_URL: `redis://127.0.0.1:${port}`, REDIS_FALLBACK: 'off', LEASE_SIZE: '1' });
    await waitFor('private Redis', () => redisAnswers(port), Boolean, 10_000);
    stack = await startStack(testEnv.config, { worker: false });
  });

  afterAll(async () => {
    await stack.close();
    redis.kill('SIGKILL');
    await testEnv.cleanup();
  });

  it('answers 503 UNAVAILABLE, then sells again once Redis is back — a new incarnation on fresh leases', async () => {
    const admin = await stack.client.adminToken(testEnv.env['ADMIN_PASSWORD']!);
    const sale = await stack.client.call<{ id: string }>('POST', '/api/admin/sales', {
      token: admin,
      json: { name: 'Fragile', priceCents: 100, stock: 3, endsAt: new Date(Date.now() + 3_600_000).toISOString() },
    });
    const buyer = await stack.client.guest();
    const token = await stack.client.submitToken(sale.body.id, buyer.token);

    redis.kill('SIGKILL');
    await new Promise((resolve) => redis.once('exit', resolve));
    const refused = await stack.client.call<{ error: { code: string } }>(
      'POST',
      `/api/sales/${sale.body.id}/purchase`,
      {
        token: buyer.token,
        json: { token },
      },
    );
    expect(refused.status).toBe(503);
    expect(refused.body.error.code).toBe('UNAVAILABLE');

    // Back, but empty (no persistence): the next purchase loads a new incarnation of the sale, which
    // sells only a fresh lease — never the unit leased to the lost one, which Redis may have promised.
    redis = startPrivateRedis(port);
    await waitFor('Redis back', () => redisAnswers(port), Boolean, 10_000);
    const accepted = await waitFor(
      'a purchase to go through',
      async () =>
        stack.client.call<{ status: string }>('POST', `/api/sales/${sale.body.id}/purchase`, {
          token: buyer.token,
          json: { token: await stack.client.submitToken(sale.body.id, buyer.token) },
        }),
      (response) => response.status === 202,
      20_000,
    );
    expect(accepted.body.status).toBe('QUEUED');
    // 3 units: 1 in doubt (the lost incarnation's lease; no worker here to settle it), 1 just sold, 1 left.
    // (The last unit is leased in the background once the balance runs low.)
    await waitFor(
      'the remaining count',
      async () => (await stack.client.call<{ remaining: number }>('GET', `/api/sales/${sale.body.id}`)).body.remaining,
      (remaining) => remaining === 1,
      5_000,
    );
    const audit = await stack.client.call<{ leases: { inDoubt: number; epoch: number } }>(
      'GET',
      `/api/admin/sales/${sale.body.id}/audit`,
      { token: admin },
    );
    expect(audit.body.leases).toMatchObject({ inDoubt: 1, epoch: 2 });
  });
});
