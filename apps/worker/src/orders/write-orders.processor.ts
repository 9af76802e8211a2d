import { type AppConfig, InjectAppConfig } from '@flash-sale/config';
import {
  LEGACY_CREATE_ORDER_JOB,
  type LegacyCreateOrderJobData,
  OrdersQueue,
  QueueName,
  QueueWorkers,
  saleOfJob,
  WRITE_ORDERS_JOB,
  type WriteOrdersJobData,
  type WriteOrdersResult,
} from '@flash-sale/queue';
import type { SaleLayout } from '@flash-sale/domain';
import { Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { Job, Worker } from 'bullmq';
import { HandoffDrain } from './handoff-drain';
import { FAILURE_REASONS, OrderWriter, type WriteOutcome } from './order-writer';

/**
 * Consumes the orders queue: `write-orders` jobs (one per sale with a backlog, see HandoffDrain) and
 * the `create-order` jobs an earlier version may have left.
 *
 * The BullMQ Worker is started here rather than with @nestjs/bullmq's `@Processor`, whose worker
 * options are fixed at decoration time: concurrency and the stalled-job lock come from config.
 */
@Injectable()
export class WriteOrdersProcessor implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(WriteOrdersProcessor.name);
  private readonly config: AppConfig['worker'];
  private worker?: Worker;

  constructor(
    private readonly drain: HandoffDrain,
    private readonly writer: OrderWriter,
    private readonly ordersQueue: OrdersQueue,
    private readonly workers: QueueWorkers,
    @InjectAppConfig() config: AppConfig,
  ) {
    this.config = config.worker;
  }

  onApplicationBootstrap(): void {
    this.worker = this.workers.start(QueueName.Orders, (job) => this.process(job), {
      // Sales written at once (one job per sale: its stream is written by one worker at a time).
      concurrency: this.config.concurrency,
      // A worker that dies (SIGKILL, OOM) stops renewing its locks; after lockDuration its active
      // jobs are found stalled (checked twice as often) and run again elsewhere, where the entries it
      // held are taken over. Short: a sale waits for its one job, so a dead lock stalls the whole sale.
      lockDuration: this.config.lockDurationMs,
      stalledInterval: Math.ceil(this.config.lockDurationMs / 2),
    });
    this.worker.on('error', (error) => this.logger.error(`Worker error: ${error.message}`));
    this.worker.on('failed', (job, error) =>
      this.logger.warn(`Job ${job?.name} ${job?.id} failed (attempt ${job?.attemptsMade}): ${error.message}`),
    );
  }

  /** Graceful stop, before connections close: take no new job, let active ones finish their batch. */
  async onModuleDestroy(): Promise<void> {
    await this.worker?.close();
  }

  private process(job: Job): Promise<WriteOrdersResult | { outcome: WriteOutcome }> {
    if (job.name === WRITE_ORDERS_JOB) return this.writeOrders(saleOfJob(job.data as WriteOrdersJobData));
    if (job.name === LEGACY_CREATE_ORDER_JOB) return this.writeLegacy(job as Job<LegacyCreateOrderJobData>);
    throw new Error(`No handler for job "${job.name}" on ${QueueName.Orders}`);
  }

  private async writeOrders(sale: SaleLayout): Promise<WriteOrdersResult> {
    const result = await this.drain.drain(sale);
    // Woken while this job is active, the sale's next job waits for this one to finish (keepLastIfActive).
    if (result.handedOn) await this.ordersQueue.wakeWriters([sale]);
    return result;
  }

  private async writeLegacy(job: Job<LegacyCreateOrderJobData>): Promise<{ outcome: WriteOutcome }> {
    const order = {
      ...job.data,
      reservedAt: new Date(job.data.reservedAt),
      epoch: job.data.epoch ?? 0,
      submitToken: job.data.submitToken ?? null,
    };
    try {
      const [outcome] = await this.writer.writeBatch(order.saleId, [order]);
      return { outcome: outcome ?? 'already-exists' };
    } catch (error) {
      if (job.attemptsMade + 1 < (job.opts.attempts ?? 1)) throw error; // BullMQ retries it with backoff
      // Its last attempt: never drop a reservation silently. Write it FAILED and give the unit back.
      return { outcome: await this.writer.failAndRelease(order, FAILURE_REASONS.retriesExhausted) };
    }
  }
}
