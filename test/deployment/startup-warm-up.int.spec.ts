import { readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import { request } from 'undici';
import { WARM_UP_SALE_ID } from '@flash-sale/domain';
import { type AppProcess, startApiProcess, startWorkerProcess } from '../support/app-processes';
import { freePort } from '../../scripts/lib/ports.mjs';
import { countRows, waitFor } from '../support/fixtures';
import { createTestEnv, openDatabase, type TestEnv } from '../support/test-env';

const WARM_UP_REQUESTS = 3_000;

/** Every table of the test database and its row count, by name. */
async function rowsOfEveryTable(testEnv: TestEnv): Promise<Record<string, number>> {
  const db = await openDatabase(testEnv.config);
  try {
    const tables = (await db.query(
      'SELECT table_name AS name FROM information_schema.tables WHERE table_schema = DATABASE() ORDER BY table_name',
    )) as { name: string }[];
    const counts: Record<string, number> = {};
    for (const { name } of tables) counts[name] = await countRows(db, `SELECT COUNT(*) AS n FROM \`${name}\``);
    return counts;
  } finally {
    await db.destroy();
  }
}

async function answer(url: string): Promise<{ status: number; text: string }> {
  try {
    const response = await request(url);
    return { status: response.statusCode, text: await response.body.text() };
  } catch {
    return { status: 0, text: '' };
  }
}

/**
 * The API warms its purchase path before it reports ready (apps/api/src/ops/startup-warm-up.ts): a real
 * process, its readiness watched from the moment it starts, then everything a user, an operator or the
 * audit could see checked for a trace of the warm-up.
 */
describe('the startup warm-ups: before readiness, off the books', () => {
  let testEnv: TestEnv;
  let api: AppProcess | undefined;
  let worker: AppProcess | undefined;

  beforeAll(async () => {
    testEnv = await createTestEnv();
  });

  afterAll(async () => {
    await api?.stop();
    await worker?.stop();
    await testEnv.cleanup();
  });

  it('readiness waits for it; it rehearses purchases and leaves no row in any table, job, metric, access line or Redis key but rate-limit counters', async () => {
    const rowsBefore = await rowsOfEveryTable(testEnv);
    // Readiness as a load balancer sees it, from the process's first instant.
    const port = await freePort();
    const seen: string[] = [];
    let watching = true;
    const started = startApiProcess({
      name: 'api-warm-up',
      port,
      env: { ...testEnv.env, LOG_LEVEL: 'info', WARM_UP_REQUESTS: String(WARM_UP_REQUESTS) },
    });
    const look = async () => {
      const { status, text } = await answer(`http://127.0.0.1:${port}/health/ready`);
      if (status) seen.push(`${status} ${text.includes('warming up') ? 'warming up' : ''}`.trim());
    };
    const watcher = (async () => {
      while (watching) {
        await look();
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    })();
    api = await started;
    watching = false;
    await watcher;
    // The watcher's last look may have been answered just before the process turned ready (which is what
    // `started` waited for): one look after it says what a load balancer sees from now on.
    await look();

    // Not ready while it warmed up, then ready.
    expect(seen).toContain('503 warming up');
    expect(seen.at(-1)).toBe('200');
    expect(seen.indexOf('503 warming up')).toBeLessThan(seen.indexOf('200'));

    const log = await waitFor(
      'the warm-up line',
      async () => readFileSync(api!.logFile, 'utf8'),
      (text) => text.includes('Purchase path warmed'),
      10_000,
    );
    expect(log).toContain(`Purchase path warmed: ${WARM_UP_REQUESTS} requests`);
    // Half its turns were buyers of the rehearsal sale, each a submit token and a purchase answered 202.
    const rehearsed = Number(/(\d+) rehearsed purchases/.exec(log)?.[1]);
    expect(rehearsed).toBeGreaterThanOrEqual(WARM_UP_REQUESTS / 4);
    // No access line for any of its requests (purchases and submit tokens, in the unknown sale or the
    // rehearsal sale, whose ids share their first digits).
    expect(log).not.toContain(`/api/sales/${WARM_UP_SALE_ID.slice(0, 13)}`);

    // No purchase counted in the metrics (a refused one would be counted by its code).
    const metrics = await answer(`http://127.0.0.1:${api.port}/metrics`);
    expect(metrics.status).toBe(200);
    const purchaseLines = metrics.text
      .split('\n')
      .filter((line) => line.startsWith('flash_sale_purchases_total{') && !line.endsWith(' 0'));
    expect(purchaseLines).toEqual([]);

    // Nothing in MySQL: every table holds the rows it held before the process started (no sale, order,
    // buyer row, lease…), the migrations' own bookkeeping included.
    expect(await rowsOfEveryTable(testEnv)).toEqual(rowsBefore);

    // In Redis only the rate-limit counters of the warm-up's callers and sales, which expire (or have
    // expired since they were listed): the rehearsal sale's reservations, buyers and hand-off stream
    // are deleted, and no write-orders job was queued for them.
    const redis = new Redis(testEnv.config.redis.url);
    try {
      const keys = await redis.keys(`${testEnv.config.redis.keyPrefix}:*`);
      const notRateLimits = keys.filter((key) => !key.includes(':rl:'));
      expect(notRateLimits).toEqual([]);
      const withoutExpiry: string[] = [];
      for (const key of keys) if ((await redis.pttl(key)) === -1) withoutExpiry.push(key);
      expect(withoutExpiry).toEqual([]);
      // The queues' keys but their settings (`…:meta`, written at startup): none, so no job was added.
      const queueKeys = await redis.keys(`${testEnv.env['QUEUE_PREFIX']}:*`);
      expect(queueKeys.filter((key) => !key.endsWith(':meta'))).toEqual([]);
    } finally {
      redis.disconnect();
    }
  }, 60_000);

  it('the worker rehearses its write path before it consumes, in transactions rolled back: no order row left', async () => {
    const db = await openDatabase(testEnv.config);
    try {
      const rowsBefore = await countRows(db, 'SELECT COUNT(*) AS n FROM orders');
      worker = await startWorkerProcess({
        name: 'worker-warm-up',
        env: { ...testEnv.env, LOG_LEVEL: 'info', WARM_UP_REQUESTS: '1000', ORDER_BATCH_SIZE: '200' },
      });
      const log = await waitFor(
        'the rehearsal line',
        async () => readFileSync(worker!.logFile, 'utf8'),
        (text) => /Write path warmed|Warm-up stopped/.test(text),
        30_000,
      );
      expect(log).toContain('Write path warmed: 1000 orders rehearsed');
      // The line comes before the worker says it consumes.
      expect(log.indexOf('Write path warmed')).toBeLessThan(log.indexOf('Worker consuming'));
      // Its rows were inserted (the insert ran: a duplicate order number would have stopped it) and rolled back.
      expect(await countRows(db, 'SELECT COUNT(*) AS n FROM orders')).toBe(rowsBefore);
      expect(await countRows(db, "SELECT COUNT(*) AS n FROM orders WHERE order_no LIKE 'warm-up-%'")).toBe(0);
    } finally {
      await db.destroy();
    }
  }, 60_000);
});
