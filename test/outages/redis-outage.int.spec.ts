import { NestFactory } from '@nestjs/core';
import type { INestApplicationContext } from '@nestjs/common';
import { WorkerModule } from '../../apps/worker/src/worker.module';
import type { ApiResponse } from '../support/api-client';
import { waitFor } from '../support/fixtures';
import { startStack, type RunningStack } from '../support/running-stack';
import { closeOutageWorld, type OutageWorld, REPAIR_EVERY_SECOND, startOutageWorld } from '../support/outage-world';

type PurchaseBody = { orderNo?: string; status?: string; error?: { code: string } };

interface Promise202 {
  userId: string;
  orderNo: string;
}

/**
 * docs/architecture.md "Who owns the stock" under a Redis outage: a private Redis is SIGKILLed while reservations
 * are unwritten, the fallback sells meanwhile, and Redis comes back — with its AOF, or empty. Every
 * 202/201 a buyer got must end as that buyer's order, nothing may be sold twice, and the books must
 * close (audit ok, drift 0) by themselves, without an admin's preload.
 */
describe('Redis outage with stock leases (private redis-server SIGKILLed, real MariaDB)', () => {
  let world: OutageWorld;
  let stack: RunningStack;
  let lateWorker: INestApplicationContext | undefined;
  let admin: string;

  beforeEach(async () => {
    world = await startOutageWorld({
      // Small leases: MySQL keeps unleased units for the fallback to sell.
      LEASE_SIZE: '20',
      LEASE_LOW_WATER: '5',
      ...REPAIR_EVERY_SECOND,
    });
  });

  afterEach(async () => {
    await closeOutageWorld(world, stack?.close(), lateWorker?.close());
    lateWorker = undefined;
  });

  /**
   * The sales' stock: larger than the first bursts plus the leases they can set off (a top-up and a
   * refill may both lease at once), so MySQL still holds unleased units for the fallback to sell.
   */
  const STOCK = 160;

  /** Signs the admin in on this test's stack (each test starts its own), then creates a sale. */
  async function signInAndCreateSale(stock: number, perUserLimit = 1): Promise<string> {
    admin = await stack.client.adminToken(world.testEnv.env['ADMIN_PASSWORD']!);
    const sale = await stack.client.createSale(admin, { name: 'Outage', priceCents: 100, stock, perUserLimit });
    return sale.id;
  }

  async function purchase(saleId: string, buyerToken: string, submitToken: string) {
    return stack.client.call<PurchaseBody>('POST', `/api/sales/${saleId}/purchase`, {
      token: buyerToken,
      json: { token: submitToken },
    });
  }

  /**
   * `count` new buyers at once, each with a fresh token. `resend`: a 503 with retry-after is sent again,
   * as the storefront does (a new incarnation starts with no units: buyers race for small leases).
   */
  async function burst(saleId: string, count: number, { resend = false } = {}) {
    return Promise.all(
      Array.from({ length: count }, async () => {
        const buyer = await stack.client.guest();
        const token = await stack.client.submitToken(saleId, buyer.token);
        const response = resend
          ? await stack.client.purchaseAsStorefront<PurchaseBody>(saleId, buyer.token, token)
          : await purchase(saleId, buyer.token, token);
        return { buyer, token, response };
      }),
    );
  }

  function promises(responses: { buyer: { userId: string }; response: ApiResponse<PurchaseBody> }[]): Promise202[] {
    return responses
      .filter(({ response }) => response.status === 202 || response.status === 201)
      .map(({ buyer, response }) => ({ userId: buyer.userId, orderNo: response.body.orderNo! }));
  }

  async function expectEveryPromiseKept(saleId: string, kept: Promise202[]): Promise<void> {
    const rows = (await world.db.query(
      `SELECT order_no, user_id, status FROM orders WHERE sale_id = ? AND status IN ('PENDING_PAYMENT', 'PAID')`,
      [saleId],
    )) as { order_no: string; user_id: string }[];
    const owner = new Map(rows.map((row) => [row.order_no, row.user_id]));
    expect(kept.filter((promise) => owner.get(promise.orderNo) !== promise.userId)).toEqual([]);
  }

  async function audit(saleId: string) {
    return (
      await stack.client.call<{
        ok: boolean;
        oversold: number;
        held: number;
        drift: number;
        stock: number;
        leases: { inDoubt: number; epoch: number };
        books: { mysqlAvailable: number; mysqlLeased: number; redisBalance: number };
      }>('GET', `/api/admin/sales/${saleId}/audit`, { token: admin })
    ).body;
  }

  it('Redis back with its AOF: the unwritten 202s are written, the fallback sold only unleased units, books close', async () => {
    // The worker is held back: the first buyers' reservations stay unwritten, in Redis only.
    stack = await startStack(world.testEnv.config, { worker: false });
    const saleId = await signInAndCreateSale(STOCK);
    const before = await burst(saleId, 50);
    expect(before.every(({ response }) => response.status === 202)).toBe(true);

    await world.redis.kill();
    // The fallback: new buyers (their tokens issued while Redis is down) buy only what MySQL never leased.
    const during = await burst(saleId, 70);
    const soldDuring = during.filter(({ response }) => response.status === 201);
    expect(soldDuring.length).toBeGreaterThan(0);
    // Conservation in MySQL: the unwritten 202s are still in `leased`; the fallback's orders are held.
    const [mysqlAfterFallback] = (await world.db.query('SELECT available, leased FROM sales WHERE id = ?', [
      saleId,
    ])) as {
      available: number;
      leased: number;
    }[];
    expect(Number(mysqlAfterFallback!.available) + Number(mysqlAfterFallback!.leased) + soldDuring.length).toBe(STOCK);
    expect(Number(mysqlAfterFallback!.leased)).toBeGreaterThanOrEqual(50);
    // The rest are told to retry (the leased units are in Redis), never SOLD_OUT while units exist.
    expect(
      during.filter(({ response }) => response.status !== 201).every(({ response }) => response.status === 503),
    ).toBe(true);
    // A 202's token replayed during the outage: Redis may have used it, so MySQL must not → 503.
    const [first] = before;
    const replayDuringOutage = await purchase(saleId, first!.buyer.token, first!.token);
    expect(replayDuringOutage.status).toBe(503);
    expect(replayDuringOutage.headers['retry-after']).toBe('1');
    // A token that was never ours is still a 403, outage or not.
    const forged = await purchase(saleId, first!.buyer.token, `${first!.token.split('.')[0]}.forged-signature`);
    expect(`${forged.status} ${forged.body.error?.code}`).toBe('403 TOKEN_INVALID');

    await world.redis.restart();
    lateWorker = await NestFactory.createApplicationContext(WorkerModule.forRoot(world.testEnv.config), {
      logger: false,
    });
    // Same incarnation (nothing was lost); its reservations are written by the worker.
    const kept = [...promises(before), ...promises(during)];
    await waitFor(
      'every promise written',
      async () => (await world.db.query('SELECT COUNT(*) AS n FROM orders WHERE sale_id = ?', [saleId]))[0].n,
      (n) => Number(n) === kept.length,
      20_000,
    );
    await expectEveryPromiseKept(saleId, kept);
    // Both directions of a token across the outage: the same order, never a second one.
    const replayedFirst = await purchase(saleId, first!.buyer.token, first!.token);
    expect(replayedFirst.body.orderNo).toBe(first!.response.body.orderNo);
    const [fallbackBuyer] = soldDuring;
    const replayedFallback = await purchase(saleId, fallbackBuyer!.buyer.token, fallbackBuyer!.token);
    expect(replayedFallback.body.orderNo).toBe(fallbackBuyer!.response.body.orderNo);

    // The rest of the stock sells on Redis, exactly.
    const after = await burst(saleId, STOCK - kept.length + 10, { resend: true });
    const soldAfter = promises(after);
    expect(soldAfter).toHaveLength(STOCK - kept.length);
    const final = await waitFor(
      'books closed',
      () => audit(saleId),
      (report) => report.ok && report.held === STOCK,
      20_000,
    );
    expect(final).toMatchObject({ oversold: 0, drift: 0, leases: { inDoubt: 0, epoch: 1 } });
    await expectEveryPromiseKept(saleId, [...kept, ...soldAfter]);
  });

  it('Redis back empty: a new incarnation sells only fresh leases, in-doubt units are settled, books close', async () => {
    stack = await startStack(world.testEnv.config);
    const saleId = await signInAndCreateSale(STOCK, 2);
    const before = await burst(saleId, 40);
    expect(before.every(({ response }) => response.status === 202)).toBe(true);
    // Without AOF or a replica, Redis's unwritten reservations die with it (docs/failure-model.md):
    // this case starts from written ones, and checks what the restart itself must never do.
    await waitFor(
      'the burst written',
      async () => (await world.db.query('SELECT COUNT(*) AS n FROM orders WHERE sale_id = ?', [saleId]))[0].n,
      (n) => Number(n) === 40,
    );

    await world.redis.kill();
    const during = await burst(saleId, 30);
    const soldDuring = during.filter(({ response }) => response.status === 201);
    // Some sold (the failure shows what the buyers were told instead).
    const answers = during.map(({ response }) => response.body.error?.code ?? response.status);
    expect(soldDuring.length > 0 ? 'some sold' : answers).toBe('some sold');
    // A 202's token replayed in the fallback: MySQL has its order (the worker wrote the token): the same order.
    const [first] = before;
    const replayed = await purchase(saleId, first!.buyer.token, first!.token);
    expect(replayed.body.orderNo).toBe(first!.response.body.orderNo);

    world.redis.loseData();
    await world.redis.restart(); // an empty data directory: Redis remembers nothing
    // The fallback's token on Redis: the same order; a limit of 2 would have allowed a second one.
    const [fallbackBuyer] = soldDuring;
    const replayedFallback = await waitFor(
      'the Redis path back',
      () => purchase(saleId, fallbackBuyer!.buyer.token, fallbackBuyer!.token),
      (response) => response.status !== 503,
      20_000,
    );
    expect(replayedFallback.body.orderNo).toBe(fallbackBuyer!.response.body.orderNo);
    const fallbackBuyerOrders = await world.db.query('SELECT COUNT(*) AS n FROM orders WHERE user_id = ?', [
      fallbackBuyer!.buyer.userId,
    ]);
    expect(Number(fallbackBuyerOrders[0].n)).toBe(1);

    // In doubt until reconciliation settles the lost incarnation (no admin action), then sold out exactly.
    await waitFor(
      'the lost incarnation settled',
      () => audit(saleId),
      (report) => report.leases.epoch === 2 && report.leases.inDoubt === 0,
      20_000,
    );
    // The audit reads MySQL, then Redis: a top-up granted between the two reads shows in Redis's balance
    // but not yet in MySQL's `leased`. Redis holding more than MySQL leased it is a fault only if it lasts.
    const leasedOnly = await waitFor(
      'Redis holding no more than MySQL leased to it',
      () => audit(saleId),
      (report) => report.books.redisBalance <= report.books.mysqlLeased,
      20_000,
    ).catch(() => audit(saleId));
    expect(leasedOnly.books.redisBalance).toBeLessThanOrEqual(leasedOnly.books.mysqlLeased);
    const after = await burst(saleId, STOCK - before.length - soldDuring.length + 10, { resend: true });
    const kept = [...promises(before), ...promises(during), ...promises(after)];
    expect(kept).toHaveLength(STOCK);
    const final = await waitFor(
      'books closed',
      () => audit(saleId),
      (report) => report.ok && report.held === STOCK,
      20_000,
    );
    expect(final).toMatchObject({ oversold: 0, drift: 0 });
    await expectEveryPromiseKept(saleId, kept);
  });
});
