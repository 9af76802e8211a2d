import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { migrate } from '@flash-sale/db';
import { OrdersQueue, writeOrdersJob } from '@flash-sale/queue';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { DataSource } from 'typeorm';
import { WorkerModule } from '../../apps/worker/src/worker.module';
import { ApiClient } from '../support/api-client';
import { exited } from '../support/child-process';
import { countRows, createLiveSale, reserveForUsers, waitFor } from '../support/fixtures';
import { freePort } from '../../scripts/lib/ports.mjs';
import { startPrivateMariaDb, type PrivateMariaDb } from '../support/private-mariadb';
import { expectEveryOrderWrittenOnce, orderOwners } from '../support/written-orders';
import { createTestEnv, openDatabase, type TestEnv } from '../support/test-env';
import { openSaleRedis, type SaleRedisAccess } from '../support/test-redis';
import { singleBucketSale } from '@flash-sale/redis';

const API_ENTRY = join(__dirname, '..', '..', 'apps', 'api', 'dist', 'main.js');
const HOUR_MS = '3600000';

/**
 * The reservation and its hand-off are one atomic step (reserve-9.lua), and a `202` is sent only after
 * the sale's writer was nudged: so no crash between them can lose an acknowledged purchase, even with
 * the safety-net sweep switched off.
 */
describe('the hand-off when the API dies mid-burst (real API process SIGKILLed, MariaDB, Redis)', () => {
  let testEnv: TestEnv;
  let db: DataSource;
  let worker: INestApplicationContext;
  let api: ChildProcess | undefined;
  let client: ApiClient | undefined;

  beforeAll(async () => {
    if (!existsSync(API_ENTRY)) throw new Error(`${API_ENTRY} is missing: build first (npm test does)`);
    // Recovery and reconciliation "disabled": their first runs happen at start, the next in an hour.
    testEnv = await createTestEnv({ RECOVERY_INTERVAL_MS: HOUR_MS, RECONCILE_INTERVAL_MS: HOUR_MS });
    db = await openDatabase(testEnv.config);
    worker = await NestFactory.createApplicationContext(WorkerModule.forRoot(testEnv.config), { logger: false });
  });

  afterAll(async () => {
    api?.kill('SIGKILL');
    if (api) await exited(api);
    await client?.close();
    await worker.close();
    await db.destroy();
    await testEnv.cleanup();
  });

  async function startApi(): Promise<ApiClient> {
    const port = await freePort();
    const child = spawn(process.execPath, [API_ENTRY], {
      env: { ...process.env, ...testEnv.env, PORT: String(port), LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    child.stderr?.on('data', (chunk: Buffer) => process.stderr.write(`[api ${child.pid}] ${chunk.toString()}`));
    api = child;
    const apiClient = new ApiClient(`http://127.0.0.1:${port}`, 64);
    await waitFor(
      'the API to answer',
      () =>
        apiClient.call('GET', '/health').then(
          (response) => response.status,
          () => 0,
        ),
      (status) => status === 200,
      30_000,
    );
    return apiClient;
  }

  it('every 202 sent before the SIGKILL becomes its buyer order; nothing is lost or written twice', async () => {
    client = await startApi();
    const admin = await client.adminToken(testEnv.env['ADMIN_PASSWORD']!);
    const sale = await client.createSale(admin, { name: 'Crash', priceCents: 100, stock: 2000 });
    const saleId = sale.id;
    const buyers = await Promise.all(
      Array.from({ length: 600 }, async () => {
        const guest = await client!.guest();
        return { guest, token: await client!.submitToken(saleId, guest.token) };
      }),
    );

    const accepted: { orderNo: string; userId: string }[] = [];
    let killed = false;
    const answers = await Promise.allSettled(
      buyers.map(async ({ guest, token }) => {
        const response = await client!.call<{ orderNo: string }>('POST', `/api/sales/${saleId}/purchase`, {
          token: guest.token,
          json: { token },
        });
        if (response.status !== 202) return response.status;
        accepted.push({ orderNo: response.body.orderNo, userId: guest.userId });
        if (!killed && accepted.length >= 60) {
          killed = true;
          api!.kill('SIGKILL');
        }
        return response.status;
      }),
    );
    await exited(api!);
    const failed = answers.filter((answer) => answer.status === 'rejected').length;
    // The kill landed mid-burst: some buyers got their 202, others only a broken connection.
    expect(accepted.length).toBeGreaterThanOrEqual(60);
    expect(failed).toBeGreaterThan(0);

    // No sweep will run: what writes these orders is the nudge each 202 waited for.
    const rows = await waitFor(
      'every acknowledged purchase written',
      () => orderOwners(db, saleId),
      (orders) => accepted.every(({ orderNo }) => orders.has(orderNo)),
      30_000,
    );
    for (const { orderNo, userId } of accepted) expect(rows.get(orderNo)).toBe(userId);
    expect(await countRows(db, 'SELECT COUNT(DISTINCT order_no) AS n FROM orders WHERE sale_id = ?', [saleId])).toBe(
      rows.size,
    );

    // A new API: the audit finds no lost reservation (any the dead API reserved without answering
    // is still in the hand-off: QUEUED, or written), no oversell, no duplicate.
    await client.close();
    client = await startApi();
    const audit = await client.call<{
      oversold: number;
      duplicateOrders: number;
      lostReservations: number;
      ordersByStatus: Record<string, number>;
    }>('GET', `/api/admin/sales/${saleId}/audit`, { token: await client.adminToken(testEnv.env['ADMIN_PASSWORD']!) });
    expect(audit.body).toMatchObject({ oversold: 0, duplicateOrders: 0, lostReservations: 0 });
    expect(audit.body.ordersByStatus['PENDING_PAYMENT']! + audit.body.ordersByStatus['QUEUED']!).toBeGreaterThanOrEqual(
      accepted.length,
    );
  });
});

/** MySQL going away mid-drain costs time, never an order: entries stay in the stream until written. */
describe('the hand-off when MariaDB stops for 10 s mid-drain (private MariaDB, real worker)', () => {
  let mariadb: PrivateMariaDb;
  let testEnv: TestEnv;
  let db: DataSource;
  let access: SaleRedisAccess;
  let worker: INestApplicationContext;

  beforeAll(async () => {
    mariadb = await startPrivateMariaDb();
    const databaseUrl = `${mariadb.serverUrl}/flash_sale_test_mysql_stop`;
    await migrate(databaseUrl);
    // Tiny batches so that the drain is still going when the server stops.
    testEnv = await createTestEnv({
      DATABASE_URL: databaseUrl,
      ORDER_BATCH_SIZE: '2',
      RECOVERY_INTERVAL_MS: '1000',
      RECOVERY_GRACE_MS: '1000',
    });
    db = await openDatabase(testEnv.config);
    access = openSaleRedis(testEnv.config.redis);
  });

  afterAll(async () => {
    await worker?.close();
    await db?.destroy();
    access?.redis.disconnect();
    await mariadb?.destroy();
    await testEnv?.cleanup();
  });

  it('every hand-off is written exactly once after MariaDB comes back', async () => {
    const { scripts, saleRedis, handoff } = access;
    const saleId = await createLiveSale(db, scripts, saleRedis, { stock: 3000 });
    const orders = await reserveForUsers(scripts, saleRedis, saleId, 3000);
    expect(await handoff.backlog(singleBucketSale(saleId))).toBe(3000);

    worker = await NestFactory.createApplicationContext(WorkerModule.forRoot(testEnv.config), { logger: false });
    const queue = worker.get(OrdersQueue).queue;
    const job = writeOrdersJob(singleBucketSale(saleId), testEnv.config.worker.jobAttempts);
    await queue.add(job.name, job.data, job.opts);
    // (This test's own pool sees the server go and come back too: a failed probe reads as -1.)
    const rows = () => countRows(db, 'SELECT COUNT(*) AS n FROM orders WHERE sale_id = ?', [saleId]).catch(() => -1);
    await waitFor('the first orders', rows, (n) => n > 0, 30_000);

    await mariadb.stop();
    const backlogWhileDown = await handoff.backlog(singleBucketSale(saleId));
    expect(backlogWhileDown).toBeGreaterThan(0); // the stop landed mid-drain
    await new Promise((resolve) => setTimeout(resolve, 10_000));
    // Ten seconds without MySQL: nothing was dropped from the hand-off meanwhile.
    expect(await handoff.backlog(singleBucketSale(saleId))).toBe(backlogWhileDown);
    await mariadb.start();

    await waitFor('all 3,000 orders', rows, (n) => n >= 3000, 90_000);
    await expectEveryOrderWrittenOnce(db, handoff, saleId, orders);
    expect(await countRows(db, 'SELECT leased AS n FROM sales WHERE id = ?', [saleId])).toBe(0);
  }, 180_000);
});
