import { errorMessage } from '@flash-sale/domain';
import { type AppConfig, InjectAppConfig } from '@flash-sale/config';
import {
  CHECK_IDLE_SALES_JOB,
  EXPIRE_OVERDUE_ORDERS_JOB,
  LifecycleQueue,
  type JobHandlers,
  type LifecycleJobName,
  processorOf,
  QueueName,
  QueueWorkers,
  type SupervisedWorker,
  RECONCILE_STOCK_JOB,
  RECOVER_RESERVATIONS_JOB,
} from '@flash-sale/queue';
import { RedisConnection } from '@flash-sale/redis';
import { Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { HandoffSweep } from './handoff-sweep';
import { OrderExpiry } from './order-expiry';
import { StockReconciliation } from './stock-reconciliation';

/** Completed and failed runs kept in Redis per scheduled job. */
const KEPT_RUNS = { completed: 100, failed: 100 };
/** The expiry sweep runs every interval (a second by default): only a short tail of it is kept. */
const KEPT_EXPIRY_RUNS = { completed: 10, failed: 100 };

/**
 * Consumes the `order-lifecycle` queue: its scheduled jobs — the expiry sweep, recovery,
 * reconciliation and the check of idle sales. The handler table is typed by job name, so a job
 * without a handler does not compile.
 */
@Injectable()
export class LifecycleProcessor implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(LifecycleProcessor.name);
  private readonly handlers: JobHandlers<LifecycleJobName> = {
    // A run stops after about one interval, so a wave of expiries never makes runs pile up behind
    // each other; the next run goes on with what is left.
    [EXPIRE_OVERDUE_ORDERS_JOB]: async () => ({
      expired: await this.expiry.sweep(new Date(), this.config.lifecycle.expirySweepIntervalMs),
    }),
    [RECOVER_RESERVATIONS_JOB]: async () => ({ nudgedSales: await this.handoffSweep.run() }),
    [RECONCILE_STOCK_JOB]: async () => {
      const { reconciled, drifts } = await this.reconciliation.run();
      return { reconciled, drifts: Object.fromEntries(drifts) };
    },
    [CHECK_IDLE_SALES_JOB]: () => this.reconciliation.checkIdleSales(),
  };
  private worker?: SupervisedWorker;
  private reconcilingAfterReconnect?: Promise<void>;

  constructor(
    private readonly expiry: OrderExpiry,
    private readonly handoffSweep: HandoffSweep,
    private readonly reconciliation: StockReconciliation,
    private readonly lifecycleQueue: LifecycleQueue,
    private readonly workers: QueueWorkers,
    private readonly redis: RedisConnection,
    @InjectAppConfig() private readonly config: AppConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.registerSchedulers();
    // A Redis that comes back without its data has forgotten the schedulers too (and with them the
    // reconciliation that repairs such a loss): register them again on every reconnect. Idempotent.
    await this.lifecycleQueue.onReconnect(() => {
      this.registerSchedulers().catch((error: unknown) =>
        this.logger.warn(`Could not register job schedulers: ${errorMessage(error)}`),
      );
    });
    this.reconcileEverySaleAfterReconnects();
    this.worker = await this.workers.start(
      QueueName.OrderLifecycle,
      processorOf(QueueName.OrderLifecycle, this.handlers),
      { concurrency: 16 },
      (error) => this.logger.error(`Lifecycle worker error: ${error.message}`),
      (message) => this.logger.warn(message),
    );
  }

  /**
   * Reconciliation visits only active sales, and the marks that make a sale active may have been lost
   * while Redis was unreachable (or all of them, with a Redis that came back empty) — as may releases
   * and the fallback's loads. So each time this worker's Redis connection comes back, every recent
   * sale is reconciled in full once, its incarnation verified first. Not on the first connection: the
   * marks of a running system are intact then.
   */
  private reconcileEverySaleAfterReconnects(): void {
    this.redis.onReconnect(() => {
      if (this.reconcilingAfterReconnect) return;
      this.reconcilingAfterReconnect = this.reconciliation
        .reconcileEverySale()
        .then(({ reconciled }) => this.logger.log(`Redis is back: ${reconciled} sale(s) reconciled`))
        .catch((error: unknown) =>
          this.logger.warn(
            `Reconciliation after the Redis reconnect failed (the idle-sale check will verify every sale): ${errorMessage(
              error,
            )}`,
          ),
        )
        .finally(() => (this.reconcilingAfterReconnect = undefined));
    });
  }

  /** Job schedulers live in Redis: however many workers start, each run happens once. */
  private async registerSchedulers(): Promise<void> {
    const { lifecycle: config } = this.config;
    await this.lifecycleQueue.schedule(EXPIRE_OVERDUE_ORDERS_JOB, config.expirySweepIntervalMs, KEPT_EXPIRY_RUNS);
    await this.lifecycleQueue.schedule(RECOVER_RESERVATIONS_JOB, config.recoveryIntervalMs, KEPT_RUNS);
    await this.lifecycleQueue.schedule(RECONCILE_STOCK_JOB, config.reconcileIntervalMs, KEPT_RUNS);
    await this.lifecycleQueue.schedule(CHECK_IDLE_SALES_JOB, config.idleSaleCheckIntervalMs, KEPT_RUNS);
  }

  async onModuleDestroy(): Promise<void> {
    if (this.worker) await this.workers.close(this.worker);
    await this.reconcilingAfterReconnect;
  }
}
