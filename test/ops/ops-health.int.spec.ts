import { migrate } from '@flash-sale/db';
import { waitFor } from '../support/fixtures';
import { PrivateRedisServer } from '../support/private-redis';
import { startPrivateMariaDb, type PrivateMariaDb } from '../support/private-mariadb';
import { startStack, type RunningStack } from '../support/running-stack';
import { createTestEnv, type TestEnv } from '../support/test-env';

interface Readiness {
  status: 'ok' | 'error';
  info: Record<string, { status: string; persistence?: string; warning?: string }>;
  error: Record<string, { status: string; message?: string }>;
}

/** Liveness and readiness while the API's Redis and MySQL go away and come back (private servers only). */
describe('GET /health and /health/ready (private redis-server and mariadbd)', () => {
  let redis: PrivateRedisServer;
  let mariadb: PrivateMariaDb;
  let testEnv: TestEnv;
  let stack: RunningStack;

  const ready = () => stack.client.call<Readiness>('GET', '/health/ready');
  const readyWith = (status: number, description: string, check: (body: Readiness) => boolean = () => true) =>
    waitFor(description, ready, (response) => response.status === status && check(response.body), 20_000);

  beforeAll(async () => {
    redis = await PrivateRedisServer.start();
    mariadb = await startPrivateMariaDb();
    const databaseUrl = `${mariadb.serverUrl}/flash_sale_test_ready`;
    await migrate(databaseUrl);
    testEnv = await createTestEnv({ REDIS_URL: redis.url, DATABASE_URL: databaseUrl });
    stack = await startStack(testEnv.config, { worker: false });
  });

  afterAll(async () => {
    await stack?.close();
    await redis?.destroy();
    await mariadb?.destroy();
    await testEnv?.cleanup();
  });

  it('is live and ready while everything answers', async () => {
    const live = await stack.client.call<{ status: string }>('GET', '/health');
    expect(live).toMatchObject({ status: 200, body: { status: 'ok' } });
    const response = await readyWith(200, 'ready');
    expect(response.body.status).toBe('ok');
    expect(Object.keys(response.body.info).sort()).toEqual(['mysql', 'queue', 'redis', 'warm-up']);
    // This Redis keeps nothing on disk: the report says so, and what it can cost.
    expect(response.body.info['redis']).toMatchObject({ status: 'up', persistence: 'none' });
    expect(response.body.info['redis']!.warning).toMatch(/loses the purchases not yet written/);
  });

  /** Not ready (503) once `gone` is reported: each of `down` down, each of `up` still up; live all along. */
  async function expectNotReadyWithout(gone: string, down: string[], up: string[]): Promise<void> {
    const report = await readyWith(503, `not ready without ${gone}`, (body) => gone in body.error);
    expect(report.body.status).toBe('error');
    for (const check of down) expect(report.body.error[check]!.status).toBe('down');
    for (const check of up) expect(report.body.info[check]!.status).toBe('up');
    // Liveness never depends on a dependency.
    expect((await stack.client.call('GET', '/health')).status).toBe(200);
  }

  it('Redis down → 503 with terminus report naming redis and the queue; back → 200', async () => {
    await redis.kill();
    await expectNotReadyWithout('redis', ['redis', 'queue'], ['mysql']);

    await redis.restart();
    await readyWith(200, 'ready again with Redis back');
  });

  it('MySQL down → 503 naming mysql; back → 200', async () => {
    await mariadb.stop();
    await expectNotReadyWithout('mysql', ['mysql'], ['redis']);

    await mariadb.start();
    await readyWith(200, 'ready again with MySQL back');
  });
});
