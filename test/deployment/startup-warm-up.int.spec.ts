import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { request } from 'undici';
import { type AppProcess, startApiProcess, startWorkerProcess } from '../support/app-processes';
import { freePort } from '../../scripts/lib/ports.mjs';
import { countRows, waitFor } from '../support/fixtures';
import { childrenRunning } from '../support/process-table';
import { createTestEnv, openDatabase, type TestEnv } from '../support/test-env';

/** Enough buyers to sell the sale out and go on, few enough to end well within the warm-up's time on a busy machine. */
const WARM_UP_REQUESTS = 600;

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

/** The built API's entry, as a process's command line names it. */
const API_DIST = join('apps', 'api', 'dist', 'main.js');

/** Every key of the test's Redis (the app's and its queues'), with those the warm-up may leave apart. */
async function keysOf(testEnv: TestEnv): Promise<string[]> {
  const redis = new Redis(testEnv.config.redis.url);
  try {
    const keys = [
      ...(await redis.keys(`${testEnv.config.redis.keyPrefix}:*`)),
      ...(await redis.keys(`${testEnv.env['QUEUE_PREFIX']}:*`)),
    ];
    return keys.sort();
  } finally {
    redis.disconnect();
  }
}

/**
 * What Redis still holds of a sale: keys of its own (but the rate-limit counters of its buyers, which
 * expire), its mark among the active sales, its drift, and `write-orders` jobs for it.
 */
async function tracesInRedis(testEnv: TestEnv, saleId: string): Promise<string[]> {
  const redis = new Redis(testEnv.config.redis.url);
  const queue = new Queue('orders', {
    connection: { url: testEnv.config.redis.url },
    prefix: testEnv.env['QUEUE_PREFIX'],
  });
  try {
    const prefix = testEnv.config.redis.keyPrefix;
    const keys = (await keysOf(testEnv)).filter((key) => namesSale(key, saleId) && !key.includes(':rl:'));
    const marked = (await redis.zscore(`${prefix}:active-sales`, saleId)) === null ? [] : ['active-sales mark'];
    const drift = (await redis.hexists(`${prefix}:reconciliation`, saleId)) ? ['drift'] : [];
    const jobs = (await queue.getJobs(['waiting', 'prioritized', 'delayed', 'paused', 'active', 'completed', 'failed']))
      .filter((job) => (job.data as { saleId?: string }).saleId === saleId)
      .map((job) => `job ${job.id}`);
    return [...keys, ...marked, ...drift, ...jobs];
  } finally {
    redis.disconnect();
    await queue.close();
  }
}

/** Whether a Redis key is one of the sale's own (its buckets' keys are `…{sale:<id>}…` or `…{sale:<id>:<bucket>}…`). */
function namesSale(key: string, saleId: string): boolean {
  return new RegExp(`sale:${saleId}[}:]`).test(key);
}

/** The line the API logs when its warm-up is over. */
async function warmUpLine(api: AppProcess): Promise<string> {
  return waitFor(
    'the warm-up line',
    async () => readFileSync(api.logFile, 'utf8'),
    (text) => /Purchase path warmed|Warm-up stopped/.test(text),
    20_000,
  );
}

/**
 * The API warms its purchase path before it reports ready (apps/api/src/ops/startup-warm-up.ts): through
 * its own front door, in a sale it creates and then removes. Real processes, readiness watched from the
 * API's first instant, then everything a user, an operator or the audit could see checked for what the
 * warm-up left.
 */
describe('the startup warm-ups: before readiness, through the front door, leaving nothing behind', () => {
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

  it('the worker runs its write path before it consumes, in transactions rolled back: no order row left', async () => {
    const db = await openDatabase(testEnv.config);
    try {
      const rowsBefore = await countRows(db, 'SELECT COUNT(*) AS n FROM orders');
      worker = await startWorkerProcess({
        name: 'worker-warm-up',
        env: { ...testEnv.env, LOG_LEVEL: 'info', WARM_UP_REQUESTS: '1000', ORDER_BATCH_SIZE: '200' },
      });
      // Both lines, whichever comes first: the log is written as the process goes, so the first one alone
      // may be there before the second.
      const log = await waitFor(
        'the write path line and the consuming line',
        async () => readFileSync(worker!.logFile, 'utf8'),
        (text) => /Write path warmed|Warm-up stopped/.test(text) && text.includes('Worker consuming'),
        30_000,
      );
      expect(log).toContain('Write path warmed: 1000 orders written and rolled back');
      // The line comes before the worker says it consumes.
      expect(log.indexOf('Write path warmed')).toBeLessThan(log.indexOf('Worker consuming'));
      // Its rows were inserted (the insert ran: a duplicate order number would have stopped it) and rolled back.
      expect(await countRows(db, 'SELECT COUNT(*) AS n FROM orders')).toBe(rowsBefore);
      expect(await countRows(db, "SELECT COUNT(*) AS n FROM orders WHERE order_no LIKE 'warm-up-%'")).toBe(0);
    } finally {
      await db.destroy();
    }
  }, 60_000);

  it('readiness waits for it; it buys and is told sold out like a crowd, counted as such, and leaves no row, key or job', async () => {
    // The worker of the test above consumes: it writes the warm-up's orders while the warm-up runs, and
    // may hold a batch of them as the sale is removed.
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

    // Every buyer took a token and bought: two in three were answered 202, the rest 410 SOLD_OUT.
    const log = await warmUpLine(api);
    const [, sent, sold, toldSoldOut] =
      /Purchase path warmed: (\d+) requests \((\d+) purchases, (\d+) told sold out\)/.exec(log) ?? [];
    expect(Number(sent)).toBe(WARM_UP_REQUESTS);
    expect(Number(sold)).toBe(Math.floor(WARM_UP_REQUESTS / 2 / 1.5));
    expect(Number(sold) + Number(toldSoldOut)).toBe(WARM_UP_REQUESTS / 2);
    // Its sale was created as an admin creates one, and its buyers took their tokens from its route.
    expect(log).toContain('"url":"/api/admin/sales"');
    const saleId = /"url":"\/api\/sales\/(\d+)\/tokens"/.exec(log)?.[1];
    expect(saleId).toBeDefined();

    // Counted as any purchases are: the warm-up went through the front door.
    const metrics = await answer(`http://127.0.0.1:${api.port}/metrics`);
    expect(metrics.status).toBe(200);
    const counted = (outcome: string) =>
      Number(
        new RegExp(`^flash_sale_purchases_total\\{[^}]*outcome="${outcome}"[^}]*\\} (\\d+)`, 'm').exec(
          metrics.text,
        )?.[1] ?? 0,
      );
    expect(counted('accepted')).toBe(Number(sold));
    expect(counted('SOLD_OUT')).toBe(Number(toldSoldOut));

    // Nothing in MySQL: every table holds the rows it held before the process started (no sale, order,
    // buyer row, lease…), the migrations' own bookkeeping included.
    expect(await rowsOfEveryTable(testEnv)).toEqual(rowsBefore);
    // Nothing in Redis of its sale (reservations, buyers, balances, hand-off streams, submit tokens, its
    // mark among the active sales, its drift, its write-orders jobs) — also once the worker is done with
    // a batch it may have held as the sale was removed.
    expect(await tracesInRedis(testEnv, saleId!)).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await tracesInRedis(testEnv, saleId!)).toEqual([]);
  }, 90_000);

  it('a process killed during its warm-up leaves its sale: the next warm-up removes it once it has ended', async () => {
    await api?.stop();
    const db = await openDatabase(testEnv.config);
    try {
      const rowsBefore = await rowsOfEveryTable(testEnv);
      const port = await freePort();
      const killed = startApiProcess({
        name: 'api-killed-warming',
        port,
        // Long enough to be killed in the middle of it.
        env: { ...testEnv.env, LOG_LEVEL: 'info', WARM_UP_REQUESTS: '100000' },
      }).catch(() => undefined);
      // Mid-warm-up: its sale exists and its buyers are taking their tokens (a row each in sale_buyers).
      const warmUpSale = await waitFor(
        'the warm-up sale, its buyers buying',
        async () =>
          (
            (await db.query(
              `SELECT s.id, COUNT(b.user_id) AS buyers FROM sales s LEFT JOIN sale_buyers b ON b.sale_id = s.id
                WHERE s.purpose = 'warm-up' GROUP BY s.id`,
            )) as { id: string; buyers: number }[]
          )[0],
        (sale) => sale !== undefined && Number(sale.buyers) > 0,
        30_000,
      ).then((sale) => String(sale!.id));
      // The one API process this test runs now, killed as a machine dies: no shutdown hook.
      for (const pid of childrenRunning(process.pid, API_DIST)) process.kill(pid, 'SIGKILL');
      await killed;
      // Left behind until its window ends, a minute after it began: its end is moved back here instead.
      expect(await countRows(db, 'SELECT COUNT(*) AS n FROM sales WHERE id = ?', [warmUpSale])).toBe(1);
      await db.query('UPDATE sales SET ends_at = starts_at + INTERVAL 1000 MICROSECOND WHERE id = ?', [warmUpSale]);

      api = await startApiProcess({
        name: 'api-after-kill',
        env: { ...testEnv.env, LOG_LEVEL: 'info', WARM_UP_REQUESTS: '100' },
      });
      await warmUpLine(api);
      expect(await countRows(db, 'SELECT COUNT(*) AS n FROM sales WHERE id = ?', [warmUpSale])).toBe(0);
      expect(await rowsOfEveryTable(testEnv)).toEqual(rowsBefore);
      expect((await keysOf(testEnv)).filter((key) => namesSale(key, warmUpSale) && !key.includes(':rl:'))).toEqual([]);
    } finally {
      // The process to kill, had the test stopped before killing it.
      for (const pid of childrenRunning(process.pid, API_DIST)) if (pid !== api?.pid) process.kill(pid, 'SIGKILL');
      await db.destroy();
    }
  }, 120_000);
});
