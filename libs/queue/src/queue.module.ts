import {
  closeRedisClient,
  createRedisClient,
  type RedisClient,
  type RedisConnectionConfig,
  RedisOutageReporter,
  REQUEST_COMMAND_RETRIES,
  watchForSilentLinks,
} from '@flash-sale/redis';
import {
  type DynamicModule,
  Global,
  Inject,
  Module,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import { type Processor, Queue, Worker, type WorkerOptions } from 'bullmq';
import { LifecycleQueue, OrdersQueue, ProductQueues } from './product-queues';
import { SupervisedWorker, type SupervisionOptions } from './supervised-worker';
import { QueueName } from './queue-names';

/** The Redis connection BullMQ uses (its own: a worker's blocking reads must not hold up other commands). */
export const QUEUE_CONNECTION = Symbol('QUEUE_CONNECTION');

export interface QueueModuleOptions {
  redis: RedisConnectionConfig;
  /** BullMQ key prefix (a hash tag, so each queue's keys share a cluster slot). */
  prefix: string;
  /**
   * `producer` (the API): a job add fails after a couple of reconnect attempts (→ 503) rather than
   * hold a request open while Redis is down. `consumer` (the worker): BullMQ's blocking reads require
   * commands to wait for the reconnect.
   */
  role: 'producer' | 'consumer';
  /** Attempts of a `write-orders` job before it is failed (retried with backoff). */
  writeOrdersAttempts: number;
}

/**
 * Starts the BullMQ workers of a consumer, each on a Redis connection of its own (`connect`), so that a
 * worker replaced for taking no job (supervised-worker.ts) starts on a fresh one rather than on a client
 * whose commands still wait on a link a partition cut.
 */
export class QueueWorkers {
  /** The queue each supervised worker's wait list is read from, closed with it. */
  private readonly watched = new Map<SupervisedWorker, Queue>();
  /** Each worker's own connection, closed after it. */
  private readonly connections = new Map<Worker, RedisClient>();

  constructor(
    /** The app's queue connection: the watched queues read through it. */
    private readonly connection: RedisClient,
    private readonly prefix: string,
    private readonly connect: () => RedisClient,
    /** How soon a worker counts as stuck (supervised-worker.ts's defaults unless said). */
    private readonly supervision: Pick<SupervisionOptions, 'stuckAfterMs' | 'checkEveryMs'> = {},
  ) {}

  /**
   * A worker, its errors reported to `onError`, once its connections are open: BullMQ opens a worker's
   * blocking connection in the background and, should the worker close before that ends (Redis lost just
   * after the start), reports the failure to listeners its close has removed — an unhandled error. It is
   * supervised (supervised-worker.ts): replaced by a fresh one, told to `onReplaced`, if it stops taking jobs.
   */
  async start(
    name: QueueName,
    processor: Processor,
    options: Omit<WorkerOptions, 'connection' | 'prefix'>,
    onError: (error: Error) => void,
    onReplaced: (message: string) => void,
  ): Promise<SupervisedWorker> {
    const create = async (counted: Processor): Promise<Worker> => {
      const connection = this.connect();
      // Its failures reach the worker's own 'error' listener below; this keeps ioredis from calling them unhandled.
      connection.on('error', () => undefined);
      const worker = new Worker(name, counted, { ...options, connection, prefix: this.prefix });
      this.connections.set(worker, connection);
      worker.on('error', onError);
      try {
        await worker.waitUntilReady();
      } catch (error) {
        await this.discard(worker);
        throw error;
      }
      return worker;
    };
    const queue = new Queue(name, { connection: this.connection, prefix: this.prefix });
    const supervised = await SupervisedWorker.start({ create, discard: (worker) => this.discard(worker) }, processor, {
      queue,
      concurrency: options.concurrency ?? 1,
      onReplaced,
      ...this.supervision,
    });
    this.watched.set(supervised, queue);
    return supervised;
  }

  /** A worker that stopped taking jobs, stopped: its close is not waited for, its connections dropped. */
  private async discard(worker: Worker): Promise<void> {
    const closing = worker.close(true).catch(() => undefined);
    stopTimers(worker);
    await dropBlockingConnection(worker);
    this.connections.get(worker)?.disconnect();
    this.connections.delete(worker);
    await closing;
  }

  /**
   * Stops a worker: it takes no new job and, while Redis answers, lets its active jobs finish. While Redis
   * is away none of them could finish (a job's outcome is written to Redis): they are left to BullMQ's
   * stall recovery and the worker's connections are dropped at once, rather than a QUIT waiting for a
   * Redis that may never come back. Redis lost while the graceful close runs (a shutdown that began as
   * Redis went away) is the same case: the close stops waiting, and the worker's blocking connection is
   * dropped; what it still waits for fails when its own connection closes, right after.
   */
  async close(supervised: SupervisedWorker): Promise<void> {
    supervised.stopWatching();
    const { worker } = supervised;
    try {
      await this.closeWorker(worker);
    } finally {
      const connection = this.connections.get(worker);
      this.connections.delete(worker);
      if (connection) await closeRedisClient(connection);
      await this.watched.get(supervised)?.close();
      this.watched.delete(supervised);
    }
  }

  private async closeWorker(worker: Worker): Promise<void> {
    const connection = this.connections.get(worker) ?? this.connection;
    if (connection.status !== 'ready') return worker.close(true);
    let onLost = (): void => undefined;
    const lost = new Promise<'lost'>((resolve) => (onLost = () => resolve('lost')));
    connection.once('close', onLost);
    const closing = worker.close(false);
    try {
      if ((await Promise.race([closing, lost])) !== 'lost') return;
      closing.catch(() => undefined);
      stopTimers(worker);
      await dropBlockingConnection(worker);
    } finally {
      connection.off('close', onLost);
    }
  }
}

/**
 * The timers of a worker whose graceful close cannot finish (its active jobs wait for a Redis that is
 * gone): BullMQ stops them only once those jobs end, so its lock extender would renew their locks — and
 * its stalled-job check wait — for ever, keeping a process that closed its app alive. Both are BullMQ's
 * private members; closing the lock manager and waking the stalled check is what its own close does last.
 */
function stopTimers(worker: Worker): void {
  const internals = worker as unknown as { stalledCheckStopper?: () => void; lockManager?: { close(): Promise<void> } };
  void internals.lockManager?.close().catch(() => undefined);
  internals.stalledCheckStopper?.();
}

/**
 * A worker's blocking connection is its own (BullMQ duplicates the one it is given) and BullMQ keeps it
 * private; its QUIT would wait in the offline queue of a client that reconnects for ever.
 */
async function dropBlockingConnection(worker: Worker): Promise<void> {
  const { blockingConnection } = worker as unknown as { blockingConnection?: { client: Promise<RedisClient> } };
  (await blockingConnection?.client)?.disconnect();
}

/**
 * A client whose links are watched (watchForSilentLinks): BullMQ's commands on it (a job taken, a lock
 * renewed) must not wait out TCP's retransmission backoff after a partition heals. Its blocking
 * connections are duplicates, not watched.
 */
function watchedForSilentLinks(client: RedisClient): RedisClient {
  watchForSilentLinks(client);
  return client;
}

/** BullMQ for a whole app: one connection, the product's queues, and (for consumers) their workers. */
@Global()
@Module({})
export class QueueModule implements OnModuleInit, OnApplicationShutdown {
  constructor(
    @Inject(QUEUE_CONNECTION) private readonly connection: RedisClient,
    private readonly orders: OrdersQueue,
    private readonly lifecycle: LifecycleQueue,
    private readonly outages: RedisOutageReporter,
  ) {}

  /** This connection and its queues are reported with the app's other Redis clients: once per outage. */
  onModuleInit(): void {
    this.outages.watch([this.connection], [this.orders.queue, this.lifecycle.queue]);
  }

  static forRoot(options: QueueModuleOptions): DynamicModule {
    const queue = (name: QueueName) => (connection: RedisClient) =>
      new Queue(name, { connection, prefix: options.prefix });
    return {
      module: QueueModule,
      providers: [
        {
          provide: QUEUE_CONNECTION,
          useFactory: () =>
            watchedForSilentLinks(
              createRedisClient(options.redis, {
                maxRetriesPerRequest: options.role === 'producer' ? REQUEST_COMMAND_RETRIES : null,
              }),
            ),
        },
        {
          provide: OrdersQueue,
          inject: [QUEUE_CONNECTION],
          useFactory: (connection: RedisClient) =>
            new OrdersQueue(queue(QueueName.Orders)(connection), options.writeOrdersAttempts),
        },
        {
          provide: LifecycleQueue,
          inject: [QUEUE_CONNECTION],
          useFactory: (connection: RedisClient) => new LifecycleQueue(queue(QueueName.OrderLifecycle)(connection)),
        },
        {
          provide: ProductQueues,
          inject: [OrdersQueue, LifecycleQueue],
          useFactory: (orders: OrdersQueue, lifecycle: LifecycleQueue) => new ProductQueues(orders, lifecycle),
        },
        {
          provide: QueueWorkers,
          inject: [QUEUE_CONNECTION],
          useFactory: (connection: RedisClient) =>
            new QueueWorkers(connection, options.prefix, () =>
              watchedForSilentLinks(createRedisClient(options.redis, { maxRetriesPerRequest: null })),
            ),
        },
      ],
      exports: [QUEUE_CONNECTION, OrdersQueue, LifecycleQueue, ProductQueues, QueueWorkers],
    };
  }

  /** After every provider's own hooks (workers close in onModuleDestroy): queues, then the connection. */
  async onApplicationShutdown(): Promise<void> {
    await Promise.all([this.orders.queue.close(), this.lifecycle.queue.close()]);
    await closeRedisClient(this.connection);
  }
}
