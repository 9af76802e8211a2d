import type { AppConfig } from '@flash-sale/config';
import {
  CHECK_IDLE_SALES_JOB,
  EXPIRE_OVERDUE_ORDERS_JOB,
  LEGACY_EXPIRE_ORDER_JOB,
  type LifecycleJobName,
  QueueName,
  RECONCILE_STOCK_JOB,
  RECOVER_RESERVATIONS_JOB,
} from '@flash-sale/queue';
import type { RedisClient } from '@flash-sale/redis';
import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { type Job, type Queue, Worker } from 'bullmq';
import { BULL_CONNECTION, LIFECYCLE_CONFIG, LIFECYCLE_QUEUE, QUEUE_PREFIX, REDIS_CLIENT } from '../worker.tokens';
import { OrderExpiry } from './order-expiry';
import { HandoffSweep } from './handoff-sweep';
import { StockReconciliation } from './stock-reconciliation';

/**
 * Consumes the `order-lifecycle` queue: its scheduled jobs — the expiry sweep, recovery,
 * reconciliation and the check of idle sales — plus `expire-order` jobs an earlier version may have
 * left in Redis. The handler table is typed by job name, so a job without a handler (or with two)
 * does not compile.
 */
@Injectable()
export class LifecycleProcessor implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(LifecycleProcessor.name);
  private worker?: Worker;
  private readonly handlers: Record<LifecycleJobName, (job: Job) => Promise<unknown>>;
  private reconcilingAfterReconnect?: Promise<void>;

  constructor(
    expiry: OrderExpiry,
    handoffSweep: HandoffSweep,
    private readonly reconciliation: StockReconciliation,
    @Inject(LIFECYCLE_QUEUE) private readonly queue: Queue,
    @Inject(BULL_CONNECTION) private readonly connection: RedisClient,
    @Inject(REDIS_CLIENT) private readonly redis: RedisClient,
    @Inject(QUEUE_PREFIX) private readonly prefix: string,
    @Inject(LIFECYCLE_CONFIG) private readonly config: AppConfig['lifecycle'],
  ) {
    this.handlers = {
      // A run stops after about one interval, so a wave of expiries never makes runs pile up behind
      // each other; the next run goes on with what is left.
      [EXPIRE_OVERDUE_ORDERS_JOB]: async () => ({
        expired: await expiry.sweep(new Date(), config.expirySweepIntervalMs),
      }),
      [RECOVER_RESERVATIONS_JOB]: async () => ({ nudgedSales: await handoffSweep.run() }),
      [RECONCILE_STOCK_JOB]: async () => {
        const { reconciled, drifts } = await reconciliation.run();
        return { reconciled, drifts: Object.fromEntries(drifts) };
      },
      [CHECK_IDLE_SALES_JOB]: () => reconciliation.checkIdleSales(),
      [LEGACY_EXPIRE_ORDER_JOB]: (job) => expiry.runLegacyJob(job),
    };
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.registerSchedulers();
    // A Redis that comes back without its data has forgotten the schedulers too (and with them the
    // reconciliation that repairs such a loss): register them again on every reconnect. Idempotent.
    this.connection.on('ready', () => {
      this.registerSchedulers().catch((error: unknown) =>
        this.logger.warn(`Could not register job schedulers: ${error instanceof Error ? error.message : error}`),
      );
    });
    this.reconcileEverySaleAfterReconnects();
    this.worker = new Worker(QueueName.OrderLifecycle, (job) => this.process(job), {
      connection: this.connection,
      prefix: this.prefix,
      concurrency: 16,
    });
    this.worker.on('error', (error) => this.logger.error(`Lifecycle worker error: ${error.message}`));
  }

  /**
   * Reconciliation visits only active sales, and the marks that make a sale active may have been lost
   * while Redis was unreachable (or all of them, with a Redis that came back empty) — as may releases
   * and the fallback's loads. So each time this worker's Redis connection comes back, every recent
   * sale is reconciled in full once, its incarnation verified first. Not on the first connection: the
   * marks of a running system are intact then.
   */
  private reconcileEverySaleAfterReconnects(): void {
    let connectedBefore = this.redis.status === 'ready';
    this.redis.on('ready', () => {
      if (!connectedBefore) {
        connectedBefore = true;
        return;
      }
      if (this.reconcilingAfterReconnect) return;
      this.reconcilingAfterReconnect = this.reconciliation
        .reconcileEverySale()
        .then(({ reconciled }) => this.logger.log(`Redis is back: ${reconciled} sale(s) reconciled`))
        .catch((error: unknown) =>
          this.logger.warn(
            `Reconciliation after the Redis reconnect failed (the idle-sale check will verify every sale): ${
              error instanceof Error ? error.message : error
            }`,
          ),
        )
        .finally(() => (this.reconcilingAfterReconnect = undefined));
    });
  }

  /** Job schedulers live in Redis: however many workers start, each run happens once. */
  private async registerSchedulers(): Promise<void> {
    await this.queue.upsertJobScheduler(
      EXPIRE_OVERDUE_ORDERS_JOB,
      { every: this.config.expirySweepIntervalMs },
      // Runs every interval (a second by default): keep only a short tail of them in Redis.
      { name: EXPIRE_OVERDUE_ORDERS_JOB, opts: { removeOnComplete: 10, removeOnFail: 100 } },
    );
    await this.queue.upsertJobScheduler(
      RECOVER_RESERVATIONS_JOB,
      { every: this.config.recoveryIntervalMs },
      { name: RECOVER_RESERVATIONS_JOB, opts: { removeOnComplete: 100, removeOnFail: 100 } },
    );
    await this.queue.upsertJobScheduler(
      RECONCILE_STOCK_JOB,
      { every: this.config.reconcileIntervalMs },
      { name: RECONCILE_STOCK_JOB, opts: { removeOnComplete: 100, removeOnFail: 100 } },
    );
    await this.queue.upsertJobScheduler(
      CHECK_IDLE_SALES_JOB,
      { every: this.config.idleSaleCheckIntervalMs },
      { name: CHECK_IDLE_SALES_JOB, opts: { removeOnComplete: 100, removeOnFail: 100 } },
    );
  }

  async onModuleDestroy(): Promise<void> {
    await this.worker?.close();
    await this.reconcilingAfterReconnect;
  }

  private process(job: Job): Promise<unknown> {
    const handler = this.handlers[job.name as LifecycleJobName] as ((job: Job) => Promise<unknown>) | undefined;
    if (!handler) throw new Error(`No handler for job "${job.name}" on ${QueueName.OrderLifecycle}`);
    return handler(job);
  }
}
