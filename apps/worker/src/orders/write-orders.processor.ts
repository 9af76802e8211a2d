import { type AppConfig, InjectAppConfig } from '@flash-sale/config';
import {
  type JobHandlers,
  type OrdersJobName,
  OrdersQueue,
  processorOf,
  QueueName,
  QueueWorkers,
  saleOfJob,
  type SupervisedWorker,
  WRITE_ORDERS_JOB,
  type WriteOrdersJobData,
  type WriteOrdersResult,
} from '@flash-sale/queue';
import type { SaleLayout } from '@flash-sale/domain';
import { Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { HandoffDrain } from './handoff-drain';

/**
 * Consumes the orders queue: its `write-orders` jobs, one per sale with a backlog (see HandoffDrain).
 * The handler table is typed by job name, so a job without a handler does not compile.
 *
 * The BullMQ Worker is started here rather than with @nestjs/bullmq's `@Processor`, whose worker
 * options are fixed at decoration time: concurrency and the stalled-job lock come from config.
 */
@Injectable()
export class WriteOrdersProcessor implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(WriteOrdersProcessor.name);
  private readonly handlers: JobHandlers<OrdersJobName> = {
    [WRITE_ORDERS_JOB]: (job) => this.writeOrders(saleOfJob(job.data as WriteOrdersJobData)),
  };
  private worker?: SupervisedWorker;

  constructor(
    private readonly drain: HandoffDrain,
    private readonly ordersQueue: OrdersQueue,
    private readonly workers: QueueWorkers,
    @InjectAppConfig() private readonly config: AppConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const { worker: config } = this.config;
    this.worker = await this.workers.start(
      QueueName.Orders,
      processorOf(QueueName.Orders, this.handlers),
      {
        // Sales written at once (one job per sale: its stream is written by one worker at a time).
        concurrency: config.concurrency,
        // A worker that dies (SIGKILL, OOM) stops renewing its locks; after lockDuration its active
        // jobs are found stalled (checked twice as often) and run again elsewhere, where the entries it
        // held are taken over. Short: a sale waits for its one job, so a dead lock stalls the whole sale.
        lockDuration: config.lockDurationMs,
        stalledInterval: Math.ceil(config.lockDurationMs / 2),
      },
      (error) => this.logger.error(`Worker error: ${error.message}`),
      (message) => this.logger.warn(message),
    );
    this.worker.on('failed', (job, error) =>
      this.logger.warn(`Job ${job?.name} ${job?.id} failed (attempt ${job?.attemptsMade}): ${error.message}`),
    );
  }

  /** Before connections close: take no new job, let active ones finish their batch (QueueWorkers.close). */
  async onModuleDestroy(): Promise<void> {
    if (this.worker) await this.workers.close(this.worker);
  }

  private async writeOrders(sale: SaleLayout): Promise<WriteOrdersResult> {
    const result = await this.drain.drain(sale);
    // Woken while this job is active, the sale's next job waits for this one to finish (keepLastIfActive).
    if (result.handedOn) await this.ordersQueue.wakeWriters([sale]);
    return result;
  }
}
