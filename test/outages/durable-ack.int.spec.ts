import { loadConfig } from '@flash-sale/config';
import { createRedisClient } from '@flash-sale/redis';
import type { DataSource } from 'typeorm';
import { waitFor } from '../support/fixtures';
import { closeWithin } from '../support/bounded-close';
import { PrivateRedisServer } from '../support/private-redis';
import { startStack, type RunningStack } from '../support/running-stack';
import { createTestEnv, openDatabase, type TestEnv } from '../support/test-env';

/**
 * DURABLE_ACK=replica: a 202 is sent only once a replica holds the reservation, so when the primary
 * dies and the replica is promoted, no acknowledged purchase is lost.
 */
describe('durable acknowledgement with a real replica (primary SIGKILLed, replica promoted)', () => {
  let primary: PrivateRedisServer;
  let replica: PrivateRedisServer;
  let testEnv: TestEnv;
  let db: DataSource;
  let stack: RunningStack;
  let promoted: RunningStack | undefined;

  beforeAll(async () => {
    ({ primary, replica } = await PrivateRedisServer.startWithReplica());
    testEnv = await createTestEnv({
      REDIS_URL: primary.url,
      DURABLE_ACK: 'replica',
      DURABLE_ACK_TIMEOUT_MS: '500',
      REDIS_FALLBACK: 'off',
      RECOVERY_INTERVAL_MS: '1000',
      RECOVERY_GRACE_MS: '1000',
      RECONCILE_INTERVAL_MS: '1000',
      // The dead primary's worker held jobs; on the promoted replica they are retaken once their lock lapses.
      WORKER_LOCK_DURATION_MS: '2000',
    });
    db = await openDatabase(testEnv.config);
    stack = await startStack(testEnv.config);
  });

  afterAll(async () => {
    await closeWithin(
      10_000,
      stack.close().catch(() => undefined),
      promoted?.close(),
    );
    await primary.destroy();
    await replica.destroy();
    await db.destroy();
    await testEnv.cleanup();
  });

  it('every 202 sent before the primary died is an order after failing over to the replica', async () => {
    const admin = await stack.client.adminToken(testEnv.env['ADMIN_PASSWORD']!);
    const sale = await stack.client.createSale(admin, { name: 'Durable', priceCents: 100, stock: 5000 });
    const saleId = sale.id;
    const buyers = await Promise.all(
      Array.from({ length: 400 }, async () => {
        const guest = await stack.client.guest();
        return { guest, token: await stack.client.submitToken(saleId, guest.token) };
      }),
    );

    // The burst, and the primary's death in the middle of it.
    const acknowledged: { userId: string; orderNo: string }[] = [];
    let answered = 0;
    const burst = Promise.all(
      buyers.map(async ({ guest, token }) => {
        const response = await stack.client
          .call<{ orderNo?: string }>('POST', `/api/sales/${saleId}/purchase`, { token: guest.token, json: { token } })
          .catch(() => ({ status: 0, body: {} as { orderNo?: string } }));
        answered += 1;
        if (response.status === 202) acknowledged.push({ userId: guest.userId, orderNo: response.body.orderNo! });
      }),
    );
    await waitFor(
      'part of the burst answered',
      async () => answered,
      (n) => n >= 100,
      20_000,
    );
    await primary.kill();
    await burst;
    expect(acknowledged.length).toBeGreaterThanOrEqual(100);

    // Fail over: promote the replica and point a new API + worker at it.
    const replicaClient = createRedisClient({ url: replica.url, clusterNodes: [] });
    await replicaClient.call('REPLICAOF', 'NO', 'ONE');
    replicaClient.disconnect();
    await closeWithin(
      5_000,
      stack.close().catch(() => undefined),
    );
    // The same test world, with Redis at the promoted replica's address.
    promoted = await startStack(loadConfig({ ...testEnv.env, REDIS_URL: replica.url }));

    const orderNos = acknowledged.map((promise) => promise.orderNo);
    const rows = await waitFor(
      'every acknowledged purchase written',
      async () =>
        (await db.query(`SELECT order_no, user_id FROM orders WHERE sale_id = ? AND status = 'PENDING_PAYMENT'`, [
          saleId,
        ])) as { order_no: string; user_id: string }[],
      (found) => orderNos.every((orderNo) => found.some((row) => row.order_no === orderNo)),
      30_000,
    );
    const owner = new Map(rows.map((row) => [row.order_no, row.user_id]));
    expect(acknowledged.filter((promise) => owner.get(promise.orderNo) !== promise.userId)).toEqual([]);
    const audit = await waitFor(
      'books closed',
      async () =>
        (
          await promoted!.client.call<{ ok: boolean; oversold: number }>('GET', `/api/admin/sales/${saleId}/audit`, {
            token: admin,
          })
        ).body,
      (report) => report.ok,
      20_000,
    );
    expect(audit.oversold).toBe(0);
  });
});
