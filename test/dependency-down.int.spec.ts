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
    // Without the fallback (test/redis-fallback.int.spec.ts covers it), Redis down means 503.
    testEnv = await createTestEnv({ REDIS_URL: `redis://127.0.0.1:${port}`, REDIS_FALLBACK: 'off' });
    await waitFor('private Redis', () => redisAnswers(port), Boolean, 10_000);
    stack = await startStack(testEnv.config, { worker: false });
  });

  afterAll(async () => {
    await stack.close();
    redis.kill('SIGKILL');
    await testEnv.cleanup();
  });

  it('answers 503 UNAVAILABLE, then sells again once Redis is back — reloading the sale from MySQL', async () => {
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

    // Back, but empty (no persistence): the sale is reloaded from MySQL on the next purchase.
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
    const after = await stack.client.call<{ remaining: number }>('GET', `/api/sales/${sale.body.id}`);
    expect(after.body.remaining).toBe(2);
  });
});
