import { EventEmitter } from 'node:events';
import { loadConfig } from '@flash-sale/config';
import {
  CHECK_IDLE_SALES_JOB,
  EXPIRE_OVERDUE_ORDERS_JOB,
  type LifecycleQueue,
  QueueName,
  type QueueWorkers,
  RECONCILE_STOCK_JOB,
  RECOVER_RESERVATIONS_JOB,
} from '@flash-sale/queue';
import { type RedisClient, RedisConnection } from '@flash-sale/redis';
import { Logger } from '@nestjs/common';
import type { Job, Processor } from 'bullmq';
import type { HandoffSweep } from './handoff-sweep';
import { LifecycleProcessor } from './lifecycle.processor';
import type { OrderExpiry } from './order-expiry';
import type { StockReconciliation, ReconciliationRun } from './stock-reconciliation';

/** The queue side: schedulers registered, the connection's reconnects, the worker started on the queue. */
class FakeQueue {
  readonly schedules: [string, number, { completed: number; failed: number }][] = [];
  scheduleFails = false;
  private reconnectListener?: () => void;
  processor?: Processor;
  started?: { name: QueueName; options: object };
  readonly worker = { on: jest.fn(), close: jest.fn(async () => undefined) };

  readonly lifecycleQueue = {
    schedule: async (jobName: string, everyMs: number, keep: { completed: number; failed: number }) => {
      if (this.scheduleFails) throw new Error('Connection is closed.');
      this.schedules.push([jobName, everyMs, keep]);
    },
    onReconnect: async (listener: () => void) => void (this.reconnectListener = listener),
  };
  readonly workers = {
    start: (name: QueueName, processor: Processor, options: object) => {
      this.started = { name, options };
      this.processor = processor;
      return this.worker;
    },
    // As QueueWorkers.close does while Redis answers: a graceful close of the worker.
    close: (worker: { close: () => Promise<void> }) => worker.close(),
  };

  reconnect(): void {
    this.reconnectListener?.();
  }

  run(name: string): Promise<unknown> {
    return this.processor!({ name } as Job);
  }
}

/** The main Redis client under a real RedisConnection: ready or not, and its 'ready' events. */
class FakeRedisClient extends EventEmitter {
  constructor(public status: 'ready' | 'connecting') {
    super();
  }
  ready(): void {
    this.status = 'ready';
    this.emit('ready');
  }
}

describe('LifecycleProcessor', () => {
  const config = loadConfig({
    EXPIRY_SWEEP_INTERVAL_MS: '1000',
    RECOVERY_INTERVAL_MS: '30000',
    RECONCILE_INTERVAL_MS: '10000',
    IDLE_SALE_CHECK_INTERVAL_MS: '600000',
  });
  let queue: FakeQueue;
  let expiry: { sweep: jest.Mock };
  let handoffSweep: { run: jest.Mock };
  let reconciliation: { run: jest.Mock; checkIdleSales: jest.Mock; reconcileEverySale: jest.Mock };

  beforeEach(() => {
    queue = new FakeQueue();
    expiry = { sweep: jest.fn(async () => 3) };
    handoffSweep = { run: jest.fn(async () => 2) };
    reconciliation = {
      run: jest.fn(async (): Promise<ReconciliationRun> => ({ reconciled: 1, drifts: new Map([['7', 0]]) })),
      checkIdleSales: jest.fn(async () => ({ verified: 1, restarted: 0, retired: 2 })),
      reconcileEverySale: jest.fn(async (): Promise<ReconciliationRun> => ({ reconciled: 4, drifts: new Map() })),
    };
    (['log', 'warn', 'error'] as const).forEach((level) =>
      jest.spyOn(Logger.prototype, level).mockImplementation(() => undefined),
    );
  });

  afterEach(() => jest.restoreAllMocks());

  async function started(redis = new FakeRedisClient('ready')): Promise<LifecycleProcessor> {
    const processor = new LifecycleProcessor(
      expiry as unknown as OrderExpiry,
      handoffSweep as unknown as HandoffSweep,
      reconciliation as unknown as StockReconciliation,
      queue.lifecycleQueue as unknown as LifecycleQueue,
      queue.workers as unknown as QueueWorkers,
      new RedisConnection(redis as unknown as RedisClient),
      config,
    );
    await processor.onApplicationBootstrap();
    return processor;
  }

  it('runs each scheduled job by its handler; a job with none fails', async () => {
    await started();
    expect(queue.started).toEqual({ name: QueueName.OrderLifecycle, options: { concurrency: 16 } });

    expect(await queue.run(EXPIRE_OVERDUE_ORDERS_JOB)).toEqual({ expired: 3 });
    // A run is given one interval, so runs never pile up behind a wave of expiries.
    expect(expiry.sweep).toHaveBeenCalledWith(expect.any(Date), 1000);
    expect(await queue.run(RECOVER_RESERVATIONS_JOB)).toEqual({ nudgedSales: 2 });
    expect(await queue.run(RECONCILE_STOCK_JOB)).toEqual({ reconciled: 1, drifts: { '7': 0 } });
    expect(await queue.run(CHECK_IDLE_SALES_JOB)).toEqual({ verified: 1, restarted: 0, retired: 2 });
    await expect(queue.run('expire-order')).rejects.toThrow('No handler for job "expire-order" on order-lifecycle');
  });

  it('registers the four schedulers at boot and again each time the queue connection comes back', async () => {
    await started();
    const expected = [
      [EXPIRE_OVERDUE_ORDERS_JOB, 1000, { completed: 10, failed: 100 }],
      [RECOVER_RESERVATIONS_JOB, 30000, { completed: 100, failed: 100 }],
      [RECONCILE_STOCK_JOB, 10000, { completed: 100, failed: 100 }],
      [CHECK_IDLE_SALES_JOB, 600000, { completed: 100, failed: 100 }],
    ];
    expect(queue.schedules).toEqual(expected);

    queue.reconnect();
    await new Promise((resolve) => setImmediate(resolve));
    expect(queue.schedules).toEqual([...expected, ...expected]);

    // A registration that fails on a reconnect is logged; the next reconnect tries again.
    queue.scheduleFails = true;
    queue.reconnect();
    await new Promise((resolve) => setImmediate(resolve));
    expect(Logger.prototype.warn).toHaveBeenCalledWith(expect.stringContaining('Could not register job schedulers'));
    queue.scheduleFails = false;
    const before = queue.schedules.length;
    queue.reconnect();
    await new Promise((resolve) => setImmediate(resolve));
    expect(queue.schedules.slice(before)).toEqual(expected);
  });

  it('reconciles every sale when the main Redis connection comes back, once at a time, not on the first connect', async () => {
    const redis = new FakeRedisClient('connecting');
    await started(redis);
    redis.ready(); // the first connection: the activity marks are intact
    expect(reconciliation.reconcileEverySale).not.toHaveBeenCalled();

    let finish!: () => void;
    reconciliation.reconcileEverySale.mockImplementationOnce(
      () => new Promise<ReconciliationRun>((resolve) => (finish = () => resolve({ reconciled: 4, drifts: new Map() }))),
    );
    redis.ready();
    redis.ready(); // while the first pass runs: no second one
    expect(reconciliation.reconcileEverySale).toHaveBeenCalledTimes(1);
    finish();
    await new Promise((resolve) => setImmediate(resolve));

    redis.ready();
    expect(reconciliation.reconcileEverySale).toHaveBeenCalledTimes(2);
  });

  it('stops its worker at shutdown', async () => {
    const processor = await started();
    await processor.onModuleDestroy();
    expect(queue.worker.close).toHaveBeenCalled();
  });
});
