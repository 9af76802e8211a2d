import { OrderWritingRepository, SaleStockRepository } from '@flash-sale/db';
import { QueueName, writeOrdersJob, type WriteOrdersResult } from '@flash-sale/queue';
import {
  createRedisClient,
  buyerBucket,
  HANDOFF_GROUP,
  type KeyBuilder,
  type RedisClient,
  type ReservationScripts,
  type HandoffStream,
  type SaleState,
  singleBucketSale,
} from '@flash-sale/redis';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { OrderNumberGenerator } from '@flash-sale/domain';
import { type Job, Queue } from 'bullmq';
import type { DataSource } from 'typeorm';
import { countRows, createLiveSale, reserveForUsers, waitFor } from '../../../../test/support/fixtures';
import { issueTestToken } from '../../../../test/support/private-redis';
import { handOffDrained } from '../../../../test/support/written-orders';
import { createTestEnv, openDatabase, type TestEnv } from '../../../../test/support/test-env';
import { openSaleRedis } from '../../../../test/support/test-redis';
import { WorkerModule } from '../worker.module';
import { HandoffSweep } from '../lifecycle/handoff-sweep';
import { HandoffDrain } from './handoff-drain';
import { OrderWriter } from './order-writer';

describe('hand-off stream → write-orders jobs → MySQL (real MariaDB, Redis, BullMQ)', () => {
  let testEnv: TestEnv;
  let db: DataSource;
  let redis: RedisClient;
  let scripts: ReservationScripts;
  let saleRedis: SaleState;
  let handoff: HandoffStream;
  let workerA: INestApplicationContext;
  let workerB: INestApplicationContext;
  let queue: Queue;
  let queueConnection: RedisClient;
  let keys: KeyBuilder;

  beforeAll(async () => {
    testEnv = await createTestEnv({ ORDER_JOB_ATTEMPTS: '3', HANDOFF_CLAIM_IDLE_MS: '300' });
    db = await openDatabase(testEnv.config);
    ({ redis, keys, scripts, saleRedis, handoff } = openSaleRedis(testEnv.config.redis));
    // Two independent worker processes' worth of state: each its own pool, writer and BullMQ worker.
    workerA = await NestFactory.createApplicationContext(WorkerModule.forRoot(testEnv.config), { logger: false });
    workerB = await NestFactory.createApplicationContext(WorkerModule.forRoot(testEnv.config), { logger: false });
    queueConnection = createRedisClient(testEnv.config.redis, { maxRetriesPerRequest: null });
    queue = new Queue(QueueName.Orders, { prefix: testEnv.config.queue.prefix, connection: queueConnection });
  });

  afterAll(async () => {
    await queue.close();
    queueConnection.disconnect();
    await workerA.close();
    await workerB.close();
    await db.destroy();
    redis.disconnect();
    await testEnv.cleanup();
  });

  const available = async (saleId: string) => countRows(db, 'SELECT available AS n FROM sales WHERE id = ?', [saleId]);
  /** Units leased to Redis and not yet an order: a written order takes its units from here. */
  const leased = async (saleId: string) => countRows(db, 'SELECT leased AS n FROM sales WHERE id = ?', [saleId]);
  const ordersOf = async (saleId: string, status = 'PENDING_PAYMENT') =>
    countRows(db, 'SELECT COUNT(*) AS n FROM orders WHERE sale_id = ? AND status = ?', [saleId, status]);

  const nudge = (saleId: string) => queue.add(...spread(writeOrdersJob(singleBucketSale(saleId), 3)));
  const spread = (job: ReturnType<typeof writeOrdersJob>) => [job.name, job.data, job.opts] as const;
  const backlog = (saleId: string) => handoff.backlog(singleBucketSale(saleId));
  /** Waits until the sale has `count` written orders and nothing left in its hand-off stream. */
  const writtenAndDrained = async (saleId: string, count: number) => {
    await waitFor(
      `${count} orders written`,
      () => ordersOf(saleId),
      (n) => n === count,
    );
    await handOffDrained(handoff, saleId);
  };
  const completedJobs = async (saleId: string): Promise<Job[]> =>
    (await queue.getJobs(['completed'])).filter((job) => job.data.saleId === saleId);
  const rowsOfOrder = (orderNo: string) =>
    countRows(db, 'SELECT COUNT(*) AS n FROM orders WHERE order_no = ?', [orderNo]);

  it('every reservation is in its sale stream at once; one nudge writes them all in batches', async () => {
    const saleId = await createLiveSale(db, scripts, saleRedis, { stock: 400 });
    const transactionSpies = [workerA, workerB].map((worker) =>
      jest.spyOn(worker.get(OrderWritingRepository), 'transaction'),
    );
    try {
      await reserveForUsers(scripts, saleRedis, saleId, 400);
      // The script itself handed every order off: nothing was added to the queue yet.
      expect(await backlog(saleId)).toBe(400);
      expect(await queue.count()).toBe(0);

      await nudge(saleId);
      await writtenAndDrained(saleId, 400);
      const [job] = await waitFor(
        'the job completed',
        () => completedJobs(saleId),
        (jobs) => jobs.length > 0,
      );
      const result = job!.returnvalue as WriteOrdersResult;
      expect(result.written).toBe(400);
      expect(result.batches.reduce((sum, size) => sum + size, 0)).toBe(400);
      expect(Math.max(...result.batches)).toBeLessThanOrEqual(testEnv.config.worker.batchSize);
      const transactions = transactionSpies.reduce((calls, spy) => calls + spy.mock.calls.length, 0);
      expect(transactions).toBeGreaterThanOrEqual(Math.ceil(400 / testEnv.config.worker.batchSize));
      expect(transactions).toBeLessThanOrEqual(Math.ceil(400 / testEnv.config.worker.batchSize) + 2);
    } finally {
      transactionSpies.forEach((spy) => spy.mockRestore());
    }
    expect(await leased(saleId)).toBe(0);
  });

  it("a written order keeps the reservation's moment to the millisecond, and expires a payment window after its batch", async () => {
    const saleId = await createLiveSale(db, scripts, saleRedis, { stock: 5 });
    const reserved = await reserveForUsers(scripts, saleRedis, saleId, 5);
    const nudgedAt = Date.now();
    await nudge(saleId);
    await writtenAndDrained(saleId, 5);
    const rows = (await db.query(
      'SELECT order_no, reserved_at, expires_at, created_at FROM orders WHERE sale_id = ? ORDER BY order_no',
      [saleId],
    )) as { order_no: string; reserved_at: Date; expires_at: Date; created_at: Date }[];
    const timeoutSeconds = await countRows(db, 'SELECT payment_timeout_seconds AS n FROM sales WHERE id = ?', [saleId]);
    expect(rows.map((row) => [row.order_no, row.reserved_at.getTime()])).toEqual(
      reserved
        .map((order) => [order.orderNo, order.reservedAt.getTime()])
        .sort(([a], [b]) => String(a).localeCompare(String(b))),
    );
    for (const row of rows) {
      // Written in UTC like every other instant: a batch's expiry is its writing time plus the window.
      const expiresIn = row.expires_at.getTime() - timeoutSeconds * 1000;
      expect(expiresIn).toBeGreaterThanOrEqual(nudgedAt - 1000);
      expect(Math.abs(expiresIn - row.created_at.getTime())).toBeLessThan(1000);
    }
  });

  it('an entry delivered again (a worker died between commit and acknowledgement) → still one order', async () => {
    const saleId = await createLiveSale(db, scripts, saleRedis, { stock: 5 });
    const [order] = await reserveForUsers(scripts, saleRedis, saleId, 1);
    const [[, [, value]]] = (await redis.xrange(keys.sale(saleId).handoff, '-', '+')) as [string, string[]][] as [
      [string, [string, string]],
    ];
    await nudge(saleId);
    await writtenAndDrained(saleId, 1);

    // The same hand-off once more, as a stream restored from before the acknowledgement would hold it.
    await redis.xadd(keys.sale(saleId).handoff, '*', 'r', value);
    await nudge(saleId);
    await handOffDrained(handoff, saleId);
    expect(await rowsOfOrder(order!.orderNo)).toBe(1);
    expect(await leased(saleId)).toBe(4);
    expect(await available(saleId)).toBe(0);
  });

  it('a reservation whose submit token already made another order → FAILED without the token, its units back', async () => {
    const saleId = await createLiveSale(db, scripts, saleRedis, { stock: 5 });
    const [order] = await reserveForUsers(scripts, saleRedis, saleId, 1);
    // Another order made with the same token (a second sale with one token, which the purchase path
    // must never make): the duplicate key it causes is no proof that this reservation is written.
    await db.query(
      `INSERT INTO orders (order_no, sale_id, user_id, user_slot, quantity, amount_cents, status, submit_token, reserved_at, expires_at)
       VALUES (?, ?, ?, 1, 1, 100, 'PENDING_PAYMENT', ?, NOW(3), NOW(3))`,
      [`${order!.orderNo}-other`, saleId, order!.userId, order!.submitToken],
    );
    const leasedBefore = await leased(saleId);
    const availableBefore = await available(saleId);
    await nudge(saleId);
    await handOffDrained(handoff, saleId);
    const [row] = (await db.query('SELECT status, failure_reason, submit_token FROM orders WHERE order_no = ?', [
      order!.orderNo,
    ])) as { status: string; failure_reason: string; submit_token: string | null }[];
    expect(row).toEqual({ status: 'FAILED', failure_reason: 'DUPLICATE_SUBMIT_TOKEN', submit_token: null });
    // Its unit is back with MySQL (leased → available; a refill may lease it to Redis again at once),
    // not counted as sold: leased + available is what it was before the write.
    expect((await leased(saleId)) + (await available(saleId))).toBe(leasedBefore + availableBefore);
  });

  it('two workers draining the same sale at once → each order once, each unit taken once', async () => {
    const saleId = await createLiveSale(db, scripts, saleRedis, { stock: 200 });
    const orders = await reserveForUsers(scripts, saleRedis, saleId, 150);
    // The consumer group gives each entry to one of them…
    const [a, b] = await Promise.all([
      workerA.get(HandoffDrain).drain(singleBucketSale(saleId)),
      workerB.get(HandoffDrain).drain(singleBucketSale(saleId)),
    ]);
    expect(a.written + b.written).toBe(150);
    // …and should both be handed the same orders (a job run twice), MySQL writes each once.
    const outcomes = (
      await Promise.all([workerA, workerB].map((worker) => worker.get(OrderWriter).writeBatch(saleId, orders)))
    ).flat();
    expect(outcomes.filter((outcome) => outcome === 'already-exists')).toHaveLength(300);
    expect(await ordersOf(saleId)).toBe(150);
    expect(await countRows(db, 'SELECT COUNT(DISTINCT order_no) AS n FROM orders WHERE sale_id = ?', [saleId])).toBe(
      150,
    );
    expect(await leased(saleId)).toBe(50);
  });

  it('a provoked optimistic-lock conflict is retried and succeeds', async () => {
    const saleId = await createLiveSale(db, scripts, saleRedis, { stock: 3 });
    const [order] = await reserveForUsers(scripts, saleRedis, saleId, 1);
    const stock = workerA.get(SaleStockRepository);
    const writer = workerA.get(OrderWriter);
    const realMove = stock.move.bind(stock);
    // Between this transaction's read and its update, another writer changes the sale row.
    const spy = jest.spyOn(stock, 'move').mockImplementationOnce(async (...args) => {
      await db.query('UPDATE sales SET version = version + 1 WHERE id = ?', [saleId]);
      return realMove(...args);
    });
    try {
      expect(await writer.writeBatch(saleId, [order!])).toEqual(['created']);
      // The conflicting try, then the successful retry.
      expect(spy.mock.calls.filter(([, calledFor]) => calledFor === saleId)).toHaveLength(2);
    } finally {
      spy.mockRestore();
    }
    expect(await ordersOf(saleId)).toBe(1);
    expect(await leased(saleId)).toBe(2);
  });

  it('units MySQL never leased → the surplus orders are FAILED, their buyers freed in Redis, nothing oversold', async () => {
    const saleId = await createLiveSale(db, scripts, saleRedis, { stock: 4 });
    const orders = await reserveForUsers(scripts, saleRedis, saleId, 4);
    expect(await saleRedis.remaining(singleBucketSale(saleId))).toBe(0);
    // MySQL, the last line of defence, leased only 1 unit (as if Redis had sold phantom stock).
    await db.query('UPDATE sales SET leased = 1, available = 3 WHERE id = ?', [saleId]);

    const outcomes = await workerA.get(OrderWriter).writeBatch(saleId, orders);
    expect(outcomes).toEqual(['created', 'rejected', 'rejected', 'rejected']);
    expect(await ordersOf(saleId)).toBe(1);
    expect(await ordersOf(saleId, 'FAILED')).toBe(3);
    expect(await leased(saleId)).toBe(0);
    expect(await available(saleId)).toBe(3);
    expect((await saleRedis.snapshot(singleBucketSale(saleId))).returned.size).toBe(3);
    // Re-running the same orders changes nothing: each release happens exactly once.
    await workerB.get(OrderWriter).writeBatch(saleId, orders);
    expect((await saleRedis.snapshot(singleBucketSale(saleId))).returned.size).toBe(3);
    expect(await available(saleId)).toBe(3);
    expect(await countRows(db, 'SELECT COUNT(*) AS n FROM orders WHERE sale_id = ?', [saleId])).toBe(4);
  });

  it('MySQL failing every attempt → the entries stay in the stream, and are written once it answers', async () => {
    const saleId = await createLiveSale(db, scripts, saleRedis, { stock: 2 });
    const [order] = await reserveForUsers(scripts, saleRedis, saleId, 1);
    // A transient failure on every attempt (MySQL unreachable, say), in both workers.
    const spies = [workerA, workerB].map((worker) =>
      jest.spyOn(worker.get(OrderWriter), 'writeBatch').mockRejectedValue(new Error('connect ECONNREFUSED')),
    );
    try {
      const job = await nudge(saleId);
      // Failed, or — retried on the other worker, which may not take over an entry this young — done
      // with nothing written: either way the job is over and the entry is still waiting.
      await waitFor(
        'the job over',
        () => job.getState(),
        (state) => state === 'failed' || state === 'completed',
        30_000,
      );
      expect(spies.reduce((calls, spy) => calls + spy.mock.calls.length, 0)).toBeGreaterThanOrEqual(1);
    } finally {
      spies.forEach((spy) => spy.mockRestore());
    }
    // Nothing was dropped or marked FAILED: the reservation waits in the stream, unacknowledged.
    expect(await backlog(saleId)).toBe(1);
    expect(await countRows(db, 'SELECT COUNT(*) AS n FROM orders WHERE sale_id = ?', [saleId])).toBe(0);
    const [pending] = (await redis.xpending(keys.sale(saleId).handoff, HANDOFF_GROUP)) as [number];
    expect(pending).toBe(1);

    // The sweep wakes the sale's writer; the entry, idle past HANDOFF_CLAIM_IDLE_MS, is taken over and written.
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(await workerA.get(HandoffSweep).run()).toBeGreaterThanOrEqual(1);
    await writtenAndDrained(saleId, 1);
    expect(await rowsOfOrder(order!.orderNo)).toBe(1);
    expect(await leased(saleId)).toBe(1);
  });

  it.each([1, 3])(
    'gathers a flow it keeps up with on %i bucket(s): after a short batch it waits ORDER_BATCH_GATHER_MS before the next read',
    async (buckets) => {
      const gatherMs = 400;
      const gathering = await NestFactory.createApplicationContext(
        WorkerModule.forRoot({ ...testEnv.config, worker: { ...testEnv.config.worker, gatherMs } }),
        { logger: false },
      );
      try {
        // Ten units per bucket: however the ten buyers fall into buckets, each finds one.
        const saleId = await createLiveSale(db, scripts, saleRedis, { stock: 10 * buckets, buckets });
        const layout = { id: saleId, buckets };
        const orderNumbers = new OrderNumberGenerator();
        const reserveOne = async (i: number) => {
          const userId = `trickle${i}`;
          const { token } = await issueTestToken(saleRedis, layout, userId, 300);
          const outcome = await scripts.reserve({
            bucket: buyerBucket(layout, userId),
            userId,
            submitToken: token,
            quantity: 1,
            orderNo: orderNumbers.next(saleId),
          });
          expect(outcome.kind).toBe('reserved');
        };
        await reserveOne(0);
        // One drain while the rest arrive one by one, 20 ms apart, all well within the gathering window.
        const drained = gathering.get(HandoffDrain).drain(layout);
        for (let i = 1; i < 10; i += 1) {
          await new Promise((resolve) => setTimeout(resolve, 20));
          await reserveOne(i);
        }
        const result = await drained;
        // Without the wait, the drain would have found the stream empty after the first order and ended.
        expect(result.written).toBe(10);
        // The first order alone, then what gathered meanwhile: a batch per bucket per round, two rounds or three.
        expect(result.batchCount).toBeLessThanOrEqual(1 + 2 * buckets);
        await writtenAndDrained(saleId, 10);
      } finally {
        await gathering.close();
      }
    },
  );
});
