import type { ChildProcess } from 'node:child_process';
import type { DataSource } from 'typeorm';
import { countRows, waitFor } from './support/fixtures';
import { freePort } from './support/free-port';
import { redisAnswers, startPrivateRedis } from './support/private-redis';
import { startStack, type RunningStack } from './support/running-stack';
import { createTestEnv, openDatabase, type TestEnv } from './support/test-env';

/** A redis-lua sale keeps selling, correctly, through MySQL while Redis is down (REDIS_FALLBACK=on). */
describe('Redis-down fallback (private redis-server, real MariaDB)', () => {
  let port: number;
  let redis: ChildProcess;
  let testEnv: TestEnv;
  let db: DataSource;
  let stack: RunningStack;

  beforeAll(async () => {
    port = await freePort();
    redis = startPrivateRedis(port);
    await waitFor('private Redis', () => redisAnswers(port), Boolean, 10_000);
    testEnv = await createTestEnv({ REDIS_URL: `redis://127.0.0.1:${port}` });
    db = await openDatabase(testEnv.config);
    stack = await startStack(testEnv.config);
  });

  afterAll(async () => {
    // After its Redis was killed and restarted, BullMQ's blocking connection can take a long while to
    // notice; the assertions are done, so do not let a slow shutdown hold the suite.
    await Promise.race([stack.close(), new Promise((resolve) => setTimeout(resolve, 10_000))]);
    redis.kill('SIGKILL');
    await db.destroy();
    await testEnv.cleanup();
  });

  it('sells through MySQL while Redis is away, never beyond the stock, and returns to Redis after', async () => {
    const admin = await stack.client.adminToken(testEnv.env['ADMIN_PASSWORD']!);
    const sale = await stack.client.call<{ id: string }>('POST', '/api/admin/sales', {
      token: admin,
      json: { name: 'Resilient', priceCents: 100, stock: 12, endsAt: new Date(Date.now() + 3_600_000).toISOString() },
    });
    const saleId = sale.body.id;
    const buy = async () => {
      const guest = await stack.client.guest();
      const token = await stack.client.submitToken(saleId, guest.token);
      return stack.client.call<{ status?: string; error?: { code: string } }>('POST', `/api/sales/${saleId}/purchase`, {
        token: guest.token,
        json: { token },
      });
    };

    const before = await Promise.all([1, 2, 3, 4].map(buy));
    expect(before.map((response) => response.status)).toEqual([202, 202, 202, 202]);
    await waitFor(
      'queued orders written',
      () => countRows(db, 'SELECT COUNT(*) AS n FROM orders WHERE sale_id = ?', [saleId]),
      (n) => n === 4,
    );

    redis.kill('SIGKILL');
    await new Promise((resolve) => redis.once('exit', resolve));
    // 10 buyers for the 8 units left: 8 orders straight into MySQL (201 PENDING_PAYMENT), 2 sold out.
    const during = await Promise.all(Array.from({ length: 10 }, buy));
    expect(during.filter((response) => response.status === 201)).toHaveLength(8);
    expect(during.filter((response) => response.status === 201).every((r) => r.body.status === 'PENDING_PAYMENT')).toBe(
      true,
    );
    expect(during.filter((response) => response.status === 410).map((r) => r.body.error?.code)).toEqual([
      'SOLD_OUT',
      'SOLD_OUT',
    ]);
    expect(await countRows(db, 'SELECT available AS n FROM sales WHERE id = ?', [saleId])).toBe(0);

    // Redis comes back empty; the sale is reloaded from MySQL, so nothing sold during the outage is sold again.
    redis = startPrivateRedis(port);
    await waitFor('Redis back', () => redisAnswers(port), Boolean, 10_000);
    const after = await waitFor(
      'Redis path back',
      buy,
      (response) => response.status !== 503 && response.status !== 201,
      20_000,
    );
    expect(`${after.status} ${after.body.error?.code}`).toBe('410 SOLD_OUT');
    expect(
      await countRows(db, `SELECT COUNT(*) AS n FROM orders WHERE sale_id = ? AND status = 'PENDING_PAYMENT'`, [
        saleId,
      ]),
    ).toBe(12);
    const audit = await stack.client.call<Record<string, unknown>>('GET', `/api/admin/sales/${saleId}/audit`, {
      token: admin,
    });
    expect(audit.body).toMatchObject({ ok: true, oversold: 0, held: 12, remaining: 0, drift: 0 });
  });
});
