import { SaleStockRepository } from '@flash-sale/db';
import { QueueName, CREATE_ORDER_JOB, createOrderJobOptions } from '@flash-sale/queue';
import {
  ReservationScripts,
  SaleRedisRepository,
  createRedisClient,
  KeyBuilder,
  type RedisClient,
} from '@flash-sale/redis';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Queue } from 'bullmq';
import type { DataSource } from 'typeorm';
import { countRows, createLiveSale, reserveForUsers, waitFor } from '../../../../test/support/fixtures';
import { createTestEnv, openDatabase, type TestEnv } from '../../../../test/support/test-env';
import { WorkerModule } from '../worker.module';
import { OrderBatcher } from './order-batcher';
import { OrderWriter } from './order-writer';

describe('order writer and create-order worker (real MariaDB, Redis, BullMQ)', () => {
  let testEnv: TestEnv;
  let db: DataSource;
  let redis: RedisClient;
  let scripts: ReservationScripts;
  let saleRedis: SaleRedisRepository;
  let workerA: INestApplicationContext;
  let workerB: INestApplicationContext;
  let queue: Queue;
  let queueConnection: RedisClient;

  beforeAll(async () => {
    testEnv = await createTestEnv({ ORDER_JOB_ATTEMPTS: '3' });
    db = await openDatabase(testEnv.config);
    redis = createRedisClient(testEnv.config.redis);
    const keys = new KeyBuilder(testEnv.config.redis.keyPrefix);
    scripts = new ReservationScripts(redis, keys);
    saleRedis = new SaleRedisRepository(redis, keys);
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

  it('one job processed twice through BullMQ → one order', async () => {
    const saleId = await createLiveSale(db, scripts, saleRedis, { stock: 5 });
    const [order] = await reserveForUsers(scripts, saleRedis, saleId, 1);
    const options = { ...createOrderJobOptions(3), jobId: order!.orderNo };

    const first = await queue.add(CREATE_ORDER_JOB, order!, options);
    await waitFor(
      'first run',
      () => first.getState(),
      (state) => state === 'completed',
    );
    // The queue forgets the job (as it does once removeOnComplete trims it): the same job comes again.
    await first.remove();
    const second = await queue.add(CREATE_ORDER_JOB, order!, options);
    await waitFor(
      'second run',
      () => second.getState(),
      (state) => state === 'completed',
    );

    const secondResult = (await queue.getJob(second.id!))?.returnvalue as { outcome: string };
    expect(secondResult.outcome).toBe('already-exists');
    expect(await countRows(db, 'SELECT COUNT(*) AS n FROM orders WHERE order_no = ?', [order!.orderNo])).toBe(1);
    expect(await leased(saleId)).toBe(4);
    expect(await available(saleId)).toBe(0);
  });

  it('two workers racing on the same orders → each order once, each unit taken once', async () => {
    const saleId = await createLiveSale(db, scripts, saleRedis, { stock: 200 });
    const orders = await reserveForUsers(scripts, saleRedis, saleId, 150);
    // Both workers are handed every order at the same time, as BullMQ would if a job were delivered twice.
    const outcomes = await Promise.all(
      [workerA, workerB].flatMap((worker) => orders.map((order) => worker.get(OrderBatcher).submit(order))),
    );
    expect(outcomes.filter((outcome) => outcome === 'created')).toHaveLength(150);
    expect(outcomes.filter((outcome) => outcome === 'already-exists')).toHaveLength(150);
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
    const conflictsBefore = writer.stats.optimisticConflicts;
    try {
      expect(await writer.writeBatch(saleId, [order!])).toEqual(['created']);
      // The conflicting try, then the successful retry.
      expect(spy.mock.calls.filter(([, calledFor]) => calledFor === saleId)).toHaveLength(2);
    } finally {
      spy.mockRestore();
    }
    expect(writer.stats.optimisticConflicts).toBe(conflictsBefore + 1);
    expect(await ordersOf(saleId)).toBe(1);
    expect(await leased(saleId)).toBe(2);
  });

  it('units MySQL never leased → the surplus orders are FAILED, their buyers freed in Redis, nothing oversold', async () => {
    const saleId = await createLiveSale(db, scripts, saleRedis, { stock: 4 });
    const orders = await reserveForUsers(scripts, saleRedis, saleId, 4);
    expect(await saleRedis.remaining(saleId)).toBe(0);
    // MySQL, the last line of defence, leased only 1 unit (as if Redis had sold phantom stock).
    await db.query('UPDATE sales SET leased = 1, available = 3 WHERE id = ?', [saleId]);

    const outcomes = await workerA.get(OrderWriter).writeBatch(saleId, orders);
    expect(outcomes).toEqual(['created', 'rejected', 'rejected', 'rejected']);
    expect(await ordersOf(saleId)).toBe(1);
    expect(await ordersOf(saleId, 'FAILED')).toBe(3);
    expect(await leased(saleId)).toBe(0);
    expect(await available(saleId)).toBe(3);
    expect((await saleRedis.snapshot(saleId)).returned.size).toBe(3);
    // Re-running the same orders changes nothing: each release happens exactly once.
    await workerB.get(OrderWriter).writeBatch(saleId, orders);
    expect((await saleRedis.snapshot(saleId)).returned.size).toBe(3);
    expect(await available(saleId)).toBe(3);
    expect(await countRows(db, 'SELECT COUNT(*) AS n FROM orders WHERE sale_id = ?', [saleId])).toBe(4);
  });

  it('group commit: 400 concurrent orders share a handful of transactions', async () => {
    const saleId = await createLiveSale(db, scripts, saleRedis, { stock: 400 });
    const orders = await reserveForUsers(scripts, saleRedis, saleId, 400);
    const writer = workerA.get(OrderWriter);
    const transactionsBefore = writer.stats.transactions;
    const outcomes = await Promise.all(orders.map((order) => workerA.get(OrderBatcher).submit(order)));
    expect(outcomes.every((outcome) => outcome === 'created')).toBe(true);
    expect(await ordersOf(saleId)).toBe(400);
    expect(await leased(saleId)).toBe(0);
    expect(writer.stats.transactions - transactionsBefore).toBeLessThan(20);
  });

  it('after the last attempt the order is FAILED and its unit returned to MySQL, never dropped', async () => {
    const saleId = await createLiveSale(db, scripts, saleRedis, { stock: 2 });
    const [order] = await reserveForUsers(scripts, saleRedis, saleId, 1);
    expect(await saleRedis.remaining(saleId)).toBe(1);
    // A transient failure on every attempt (MySQL unreachable, say), in both workers.
    const spies = [workerA, workerB].map((worker) =>
      jest.spyOn(worker.get(OrderWriter), 'writeBatch').mockRejectedValue(new Error('connect ECONNREFUSED')),
    );
    try {
      const job = await queue.add(CREATE_ORDER_JOB, order!, {
        ...createOrderJobOptions(3),
        backoff: { type: 'fixed', delay: 10 },
        jobId: order!.orderNo,
      });
      await waitFor(
        'last attempt',
        () => job.getState(),
        (state) => state === 'completed',
        30_000,
      );
      expect(spies.reduce((calls, spy) => calls + spy.mock.calls.length, 0)).toBe(3);
    } finally {
      spies.forEach((spy) => spy.mockRestore());
    }
    expect(await ordersOf(saleId, 'FAILED')).toBe(1);
    // The FAILED order's unit leaves the lease for `available`, from where a new lease can sell it.
    expect(await available(saleId)).toBe(1);
    expect(await leased(saleId)).toBe(1);
    expect(await saleRedis.remaining(saleId)).toBe(1);
    expect((await saleRedis.snapshot(saleId)).returned.has(order!.orderNo)).toBe(true);
  });
});
