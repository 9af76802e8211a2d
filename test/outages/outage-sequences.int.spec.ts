import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { WorkerModule } from '../../apps/worker/src/worker.module';
import type { ApiResponse } from '../support/api-client';
import { waitFor } from '../support/fixtures';
import { freePort } from '../../scripts/lib/ports.mjs';
import { ReplyDroppingProxy } from '../support/reply-dropping-proxy';
import { startStack, type RunningStack } from '../support/running-stack';
import { closeOutageWorld, type OutageWorld, REPAIR_EVERY_SECOND, startOutageWorld } from '../support/outage-world';

type Answer = { orderNo?: string; status?: string; error?: { code: string } };
type Buyer = { token: string; userId: string };

/**
 * The sequences that hand-picked outage tests missed: two outages around one token, a replay through
 * the fallback, quantities above 1, a reply lost after Redis ran the script, a Redis restarted empty
 * under a buyer's unspent token. Each is a promise of docs/failure-model.md: one submit token gives at
 * most one order and always the same order number; every 202/201 ends as that buyer's order; the
 * per-user limit counts units. The API reaches a private Redis (with its AOF) through a proxy that can
 * lose a reply; the worker is started only when a case wants its reservations written.
 */
describe('outage sequences (private redis-server SIGKILLed, a reply-dropping proxy, real MariaDB)', () => {
  let world: OutageWorld;
  let proxy: ReplyDroppingProxy;
  let stack: RunningStack;
  let worker: INestApplicationContext | undefined;
  let admin: string;

  const startRedis = () => world.redis.restart();

  async function killRedis({ loseData = false } = {}): Promise<void> {
    await world.redis.kill();
    proxy.cutAll();
    if (loseData) world.redis.loseData();
  }

  beforeEach(async () => {
    world = await startOutageWorld(async (server) => {
      proxy = await ReplyDroppingProxy.start(await freePort(), server.port);
      return {
        REDIS_URL: `redis://127.0.0.1:${proxy.port}`,
        REDIS_FALLBACK: 'on',
        LEASE_SIZE: '10',
        LEASE_LOW_WATER: '2',
        ...REPAIR_EVERY_SECOND,
      };
    });
    stack = await startStack(world.testEnv.config, { worker: false });
    admin = await stack.client.adminToken(world.testEnv.env['ADMIN_PASSWORD']!);
  });

  afterEach(async () => {
    await closeOutageWorld(world, stack?.close(), worker?.close());
    worker = undefined;
    await proxy.close();
  });

  function purchase(saleId: string, buyer: Buyer, submitToken: string, quantity = 1): Promise<ApiResponse<Answer>> {
    return stack.client.call<Answer>('POST', `/api/sales/${saleId}/purchase`, {
      token: buyer.token,
      json: { token: submitToken, quantity },
    });
  }

  /** The answer once it is no longer "retry later": what the storefront ends up showing. */
  function settledPurchase(saleId: string, buyer: Buyer, submitToken: string, quantity = 1) {
    return waitFor(
      'an answer other than 503',
      () => purchase(saleId, buyer, submitToken, quantity),
      (response) => response.status !== 503,
      20_000,
    );
  }

  /** Redis is up for the API again (its connection back and ready), so purchases go to Redis. */
  async function untilApiSeesRedis(): Promise<void> {
    await waitFor(
      'the API ready on Redis',
      async () => (await stack.client.call('GET', '/health/ready')).status,
      (status) => status === 200,
      20_000,
    );
  }

  async function startWorker(): Promise<void> {
    worker = await NestFactory.createApplicationContext(WorkerModule.forRoot(world.testEnv.config), { logger: false });
  }

  async function ordersWithToken(submitToken: string) {
    return (await world.db.query('SELECT order_no, user_id, status FROM orders WHERE submit_token = ?', [
      submitToken,
    ])) as {
      order_no: string;
      user_id: string;
      status: string;
    }[];
  }

  /** Waits until the worker wrote the order made with `submitToken`; returns its rows. */
  function orderWrittenWithToken(submitToken: string) {
    return waitFor(
      'the order written',
      () => ordersWithToken(submitToken),
      (rows) => rows.length > 0,
    );
  }

  async function unitsHeld(saleId: string, userId: string): Promise<number> {
    const [row] = (await world.db.query(
      `SELECT COALESCE(SUM(quantity), 0) AS n FROM orders
       WHERE sale_id = ? AND user_id = ? AND status IN ('PENDING_PAYMENT', 'PAID')`,
      [saleId, userId],
    )) as { n: string }[];
    return Number(row!.n);
  }

  async function expectBooksClosed(saleId: string): Promise<void> {
    const audit = await waitFor(
      'the audit clean',
      async () =>
        (
          await stack.client.call<{ ok: boolean; oversold: number; duplicateOrders: number; lostReservations: number }>(
            'GET',
            `/api/admin/sales/${saleId}/audit`,
            { token: admin },
          )
        ).body,
      (report) => report.ok,
      30_000,
    );
    expect(audit).toMatchObject({ oversold: 0, duplicateOrders: 0, lostReservations: 0 });
  }

  it('a token minted while Redis was down, bought on Redis, replayed through the fallback → one order, one number', async () => {
    const saleId = (await stack.client.createSale(admin, { stock: 20, perUserLimit: 1 })).id;
    const buyer = await stack.client.guest();
    await killRedis();
    const token = await stack.client.submitToken(saleId, buyer.token);

    await startRedis();
    await untilApiSeesRedis();
    const bought = await purchase(saleId, buyer, token);
    expect(bought.status).toBe(202);

    await killRedis(); // before any worker wrote the order
    const replayInOutage = await purchase(saleId, buyer, token);
    expect(`${replayInOutage.status} ${replayInOutage.headers['retry-after']}`).toBe('503 1');

    await startRedis();
    const replayAfter = await settledPurchase(saleId, buyer, token);
    expect(replayAfter.body.orderNo).toBe(bought.body.orderNo);
    await startWorker();
    const written = await orderWrittenWithToken(token);
    expect(written).toEqual([{ order_no: bought.body.orderNo, user_id: buyer.userId, status: 'PENDING_PAYMENT' }]);
    await expectBooksClosed(saleId);
  });

  it('the per-user limit counts units across an outage; older 202s are never the ones to fail', async () => {
    const saleId = (await stack.client.createSale(admin, { stock: 60, perUserLimit: 3 })).id;
    const buyer = await stack.client.guest();
    const earlier = [await stack.client.buy(saleId, buyer.token, 1), await stack.client.buy(saleId, buyer.token, 1)];
    expect(earlier.map((response) => response.status)).toEqual([202, 202]);
    // Others with a 202 each, unwritten (no worker yet), who will try again during the outage.
    const others = await Promise.all(Array.from({ length: 20 }, () => stack.client.guest()));
    const first = await Promise.all(others.map((other) => stack.client.buy(saleId, other.token, 1)));
    expect(first.every((response) => response.status === 202)).toBe(true);

    await killRedis();
    // New tokens, issued while Redis is down: MySQL cannot see these buyers' reservations, so it must
    // not sell to them now — 3 more units would make 5 of a limit of 3.
    const more = await stack.client.buy(saleId, buyer.token, 3);
    expect(more.status).toBe(503);
    const again = await Promise.all(others.map((other) => stack.client.buy(saleId, other.token, 2)));
    expect(again.map((response) => response.status)).toEqual(others.map(() => 503));
    // A buyer Redis never saw buys through the fallback, within the limit.
    const newcomer = await stack.client.guest();
    const newcomerBought = await stack.client.buy(saleId, newcomer.token, 2);
    expect(newcomerBought.status).toBe(201);

    await startRedis();
    await untilApiSeesRedis();
    await startWorker();
    const promised = [
      ...earlier.map((response) => ({ userId: buyer.userId, orderNo: response.body.orderNo! })),
      ...first.map((response, i) => ({ userId: others[i]!.userId, orderNo: response.body.orderNo! })),
      { userId: newcomer.userId, orderNo: newcomerBought.body.orderNo! },
    ];
    await waitFor(
      'every promise written',
      async () =>
        (await world.db.query(
          `SELECT order_no, user_id, status FROM orders WHERE sale_id = ? AND order_no IN (${promised.map(() => '?').join(',')})`,
          [saleId, ...promised.map((promise) => promise.orderNo)],
        )) as { order_no: string; user_id: string; status: string }[],
      (rows) => rows.length === promised.length,
    ).then((rows) => {
      expect(rows.filter((row) => row.status !== 'PENDING_PAYMENT')).toEqual([]);
    });
    expect(await unitsHeld(saleId, buyer.userId)).toBe(2);

    // Back on Redis, the limit still counts units — the fallback's buyer's too.
    const oneMore = await stack.client.buy(saleId, buyer.token, 1);
    expect(oneMore.status).toBe(202);
    const beyond = await stack.client.buy(saleId, buyer.token, 1);
    expect(`${beyond.status} ${beyond.body.error?.code}`).toBe('409 LIMIT_REACHED');
    const newcomerBeyond = await stack.client.buy(saleId, newcomer.token, 2);
    expect(`${newcomerBeyond.status} ${newcomerBeyond.body.error?.code}`).toBe('409 LIMIT_REACHED');
    const newcomerLast = await stack.client.buy(saleId, newcomer.token, 1);
    expect(newcomerLast.status).toBe(202);
    // Their last 202s are written by the worker a moment later.
    for (const { userId } of [buyer, newcomer]) {
      await waitFor(
        'the last orders written',
        () => unitsHeld(saleId, userId),
        (units) => units === 3,
      );
    }
    await expectBooksClosed(saleId);
  });

  it('a reserve whose reply is lost is uncertain: the fallback does not sell it again, a replay settles it', async () => {
    const saleId = (await stack.client.createSale(admin, { stock: 20, perUserLimit: 1 })).id;
    const adopted = await stack.client.guest();
    await killRedis();
    const adoptedToken = await stack.client.submitToken(saleId, adopted.token); // minted while Redis is down
    await startRedis();
    await untilApiSeesRedis();
    const regular = await stack.client.guest();
    const regularToken = await stack.client.submitToken(saleId, regular.token);

    for (const [buyer, token] of [
      [adopted, adoptedToken],
      [regular, regularToken],
    ] as const) {
      // Redis runs the reservation; its answer never reaches the API, which falls back on MySQL.
      proxy.dropNextReplyWhere((reply) => reply.includes('*8\r\n:1\r\n$'));
      const uncertain = await purchase(saleId, buyer, token);
      expect(uncertain.status).toBe(503);
      const settled = await settledPurchase(saleId, buyer, token);
      expect(settled.status).toBe(202);
      const replayed = await purchase(saleId, buyer, token);
      expect(replayed.body.orderNo).toBe(settled.body.orderNo);
    }
    expect(proxy.dropped).toBe(2);

    await startWorker();
    for (const [buyer, token] of [
      [adopted, adoptedToken],
      [regular, regularToken],
    ] as const) {
      const rows = await orderWrittenWithToken(token);
      expect(rows).toEqual([expect.objectContaining({ user_id: buyer.userId, status: 'PENDING_PAYMENT' })]);
    }
    await expectBooksClosed(saleId);
  });

  it('an unspent submit token survives a Redis restarted without its data', async () => {
    await startWorker();
    const saleId = (await stack.client.createSale(admin, { stock: 20, perUserLimit: 1 })).id;
    const buyer = await stack.client.guest();
    const token = await stack.client.submitToken(saleId, buyer.token);
    await killRedis({ loseData: true });
    await startRedis();
    await untilApiSeesRedis();
    const bought = await purchase(saleId, buyer, token);
    expect(bought.status).toBe(202);
    const rows = await orderWrittenWithToken(token);
    expect(rows).toEqual([{ order_no: bought.body.orderNo, user_id: buyer.userId, status: 'PENDING_PAYMENT' }]);
    await expectBooksClosed(saleId);
  });
});
