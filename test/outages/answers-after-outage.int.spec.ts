import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { QueryRunner } from 'typeorm';
import { WorkerModule } from '../../apps/worker/src/worker.module';
import type { ApiResponse, PurchaseAnswer } from '../support/api-client';
import { waitFor } from '../support/fixtures';
import { startStack, type RunningStack } from '../support/running-stack';
import { closeOutageWorld, type OutageWorld, REPAIR_EVERY_SECOND, startOutageWorld } from '../support/outage-world';

type Buyer = { token: string; userId: string };

/**
 * Answers that must be true when they are given (docs/failure-model.md, "Answers judged when given"),
 * in the two interleavings where they once were not:
 *
 * - a purchase whose first try met SOLD_OUT waits on MySQL for a top-up; meanwhile Redis comes back from
 *   an older copy of its data (which still holds a unit that MySQL saw sold). Every try of a purchase must
 *   run on a Redis verified for the sale's incarnation, so the retry is not a `202` that the worker then
 *   writes `FAILED`;
 * - a buyer bought through the Redis-down fallback; after Redis is back, another API instance sells the
 *   sale out and flags it sold out. That buyer's replay must get the same `201` on every instance,
 *   never the flag's `410`.
 *
 * Real processes' state: a private redis-server with its append-only file (killed, restarted from a copy),
 * two API instances, a worker started and stopped by the test, MariaDB with a table lock held by the test
 * to make MySQL slow at the chosen moment.
 */
describe('answers after an outage are true (private redis-server, real MariaDB)', () => {
  let world: OutageWorld;
  let first: RunningStack;
  let second: RunningStack;
  let worker: INestApplicationContext | undefined;
  let admin: string;

  beforeEach(async () => {
    world = await startOutageWorld({
      REDIS_FALLBACK: 'on',
      LEASE_SIZE: '2',
      LEASE_LOW_WATER: '0',
      ...REPAIR_EVERY_SECOND,
    });
    first = await startStack(world.testEnv.config, { worker: false });
    second = await startStack(world.testEnv.config, { worker: false });
    admin = await first.client.adminToken(world.testEnv.env['ADMIN_PASSWORD']!);
  });

  afterEach(async () => {
    await closeOutageWorld(world, first?.close(), second?.close(), worker?.close());
    worker = undefined;
  });

  const startWorker = async () => {
    worker = await NestFactory.createApplicationContext(WorkerModule.forRoot(world.testEnv.config), { logger: false });
  };
  const stopWorker = async () => {
    await worker?.close();
    worker = undefined;
  };

  function purchase(stack: RunningStack, saleId: string, buyer: Buyer, submitToken: string) {
    return stack.client.call<PurchaseAnswer>('POST', `/api/sales/${saleId}/purchase`, {
      token: buyer.token,
      json: { token: submitToken },
    });
  }

  async function untilReadyOnRedis(stack: RunningStack): Promise<void> {
    await waitFor(
      'the API ready on Redis',
      async () => (await stack.client.call('GET', '/health/ready')).status,
      (status) => status === 200,
      20_000,
    );
  }

  async function orderStatuses(saleId: string): Promise<Record<string, string>> {
    const rows = (await world.db.query('SELECT order_no, status FROM orders WHERE sale_id = ?', [saleId])) as {
      order_no: string;
      status: string;
    }[];
    return Object.fromEntries(rows.map((row) => [row.order_no, row.status]));
  }

  /** Holds `LOCK TABLES sales WRITE` on a connection of its own: every other reader of the sale waits. */
  async function lockSalesTable(): Promise<QueryRunner> {
    const runner = world.db.createQueryRunner();
    await runner.connect();
    await runner.query('LOCK TABLES sales WRITE');
    return runner;
  }

  async function untilSomeoneWaitsOnSales(): Promise<void> {
    await waitFor(
      'a query waiting for the sales table',
      async () =>
        (await world.db.query(
          "SELECT COUNT(*) AS n FROM information_schema.processlist WHERE state LIKE '%lock%' AND info LIKE '%sales%'",
        )) as { n: string }[],
      ([row]) => Number(row!.n) > 0,
      10_000,
    );
  }

  it('a purchase waiting on a MySQL top-up while Redis comes back from an older copy is not promised a unit MySQL sold', async () => {
    const saleId = (await first.client.createSale(admin, { name: 'Older copy', stock: 2, perUserLimit: 1 })).id;
    const [ada, bob, cyd] = [await first.client.guest(), await first.client.guest(), await first.client.guest()];
    await startWorker();
    const adaBought = await first.client.buy(saleId, ada.token);
    expect(adaBought.status).toBe(202);
    await first.client.orderWritten(adaBought.body.orderNo!, ada.token);
    const cydToken = await first.client.submitToken(saleId, cyd.token);
    // Redis's data as it is now — one unit left — is what it will come back with.
    const olderCopy = world.redis.snapshot();
    const bobBought = await first.client.buy(saleId, bob.token);
    expect(bobBought.status).toBe(202);
    await first.client.orderWritten(bobBought.body.orderNo!, bob.token);
    await stopWorker();

    // Cyd's first try meets SOLD_OUT and waits on MySQL for a top-up...
    const lock = await lockSalesTable();
    const cydAnswer = purchase(first, saleId, cyd, cydToken);
    try {
      await untilSomeoneWaitsOnSales();
      // ...while Redis restarts from the older copy, which still has a unit to sell.
      await world.redis.kill();
      world.redis.restoreSnapshot(olderCopy);
      await world.redis.restart();
      await untilReadyOnRedis(first);
    } finally {
      await lock.query('UNLOCK TABLES');
      await lock.release();
    }
    const answer = await cydAnswer;

    // Sold out (or "try again" while the lost copy's units are recounted): never a unit MySQL sold.
    expect([410, 503]).toContain(answer.status);
    await startWorker();
    await waitFor(
      'the audit clean',
      async () =>
        (await first.client.call<{ ok: boolean }>('GET', `/api/admin/sales/${saleId}/audit`, { token: admin })).body,
      (audit) => audit.ok,
      30_000,
    );
    expect(await orderStatuses(saleId)).toEqual({
      [adaBought.body.orderNo!]: 'PENDING_PAYMENT',
      [bobBought.body.orderNo!]: 'PENDING_PAYMENT',
    });
  });

  it("a fallback buyer's replay gets the same 201 from every API instance after another one flagged the sale sold out", async () => {
    // One bucket: with its first leases (LEASE_SIZE 2) MySQL keeps units the fallback may sell; on 3 buckets
    // the first leases take the whole stock.
    const saleId = (
      await first.client.createSale(admin, { name: 'Flag and fallback', stock: 4, perUserLimit: 1, buckets: 1 })
    ).id;
    const zoe = await first.client.guest();
    const others = await Promise.all(Array.from({ length: 4 }, () => second.client.guest()));

    // A buyer Redis never saw, with a token issued while Redis is down: the fallback may sell to her.
    await world.redis.kill();
    const zoeToken = await first.client.submitToken(saleId, zoe.token);
    const bought = await waitFor(
      'the fallback to sell',
      () => purchase(first, saleId, zoe, zoeToken),
      (response) => response.status !== 503,
      20_000,
    );
    expect(bought.status).toBe(201);

    // Redis back with its data; no worker, so nothing loads Zoe's order into Redis behind the flag.
    await world.redis.restart();
    await Promise.all([untilReadyOnRedis(first), untilReadyOnRedis(second)]);
    const sold: ApiResponse<PurchaseAnswer>[] = [];
    for (const other of others) sold.push(await second.client.buy(saleId, other.token));
    expect(sold.map((response) => response.status)).toEqual([202, 202, 202, 410]);
    // The second instance reads its flag in the background after that SOLD_OUT.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const laterBuyer = await second.client.guest();
    expect((await second.client.buy(saleId, laterBuyer.token)).status).toBe(410);

    const replays = [
      await purchase(second, saleId, zoe, zoeToken),
      await purchase(first, saleId, zoe, zoeToken),
      await purchase(second, saleId, zoe, zoeToken),
    ];
    expect(replays.map((replay) => `${replay.status} ${replay.body.orderNo}`)).toEqual(
      replays.map(() => `201 ${bought.body.orderNo}`),
    );
  });

  it('a 202 whose reservation Redis lost (back from an older copy, nothing written yet) is bought again under the number promised', async () => {
    const saleId = (await first.client.createSale(admin, { name: 'Lost reservation', stock: 3, perUserLimit: 1 })).id;
    const ada = await first.client.guest();
    const adaToken = await first.client.submitToken(saleId, ada.token);
    const olderCopy = world.redis.snapshot();
    const promised = await purchase(first, saleId, ada, adaToken);
    expect(promised.status).toBe(202);

    // No worker has written it: the copy Redis comes back from has neither the reservation nor its hand-off.
    await world.redis.kill();
    world.redis.restoreSnapshot(olderCopy);
    await world.redis.restart();
    await Promise.all([untilReadyOnRedis(first), untilReadyOnRedis(second)]);

    const replayed = await waitFor(
      'an answer other than 503',
      () => purchase(second, saleId, ada, adaToken),
      (response) => response.status !== 503,
      20_000,
    );
    expect(`${replayed.status} ${replayed.body.orderNo}`).toBe(`202 ${promised.body.orderNo}`);
    expect((await purchase(first, saleId, ada, adaToken)).body.orderNo).toBe(promised.body.orderNo);
    await startWorker();
    await first.client.orderWritten(promised.body.orderNo!, ada.token);
    expect(Object.keys(await orderStatuses(saleId))).toEqual([promised.body.orderNo]);
  });
});
