import type { AppConfig } from '@flash-sale/config';
import { CREATE_ORDER_JOB, type CreateOrderJobData, QueueName } from '@flash-sale/queue';
import { OnWorkerEvent, Processor, WorkerHost } from '@nestjs/bullmq';
import { Inject, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import type { Job } from 'bullmq';
import { WORKER_CONFIG } from '../worker.tokens';
import { OrderBatcher } from './order-batcher';
import { FAILURE_REASONS, OrderWriter, type WriteOutcome } from './order-writer';

/** Consumes `create-order` jobs. Concurrency comes from config; the batcher turns them into group commits. */
@Processor(QueueName.Orders)
export class CreateOrderProcessor extends WorkerHost implements OnApplicationBootstrap {
  private readonly logger = new Logger(CreateOrderProcessor.name);

  constructor(
    private readonly batcher: OrderBatcher,
    private readonly writer: OrderWriter,
    @Inject(WORKER_CONFIG) private readonly config: AppConfig['worker'],
  ) {
    super();
  }

  onApplicationBootstrap(): void {
    this.worker.concurrency = this.config.concurrency;
  }

  async process(job: Job<CreateOrderJobData>): Promise<{ outcome: WriteOutcome }> {
    if (job.name !== CREATE_ORDER_JOB) throw new Error(`No handler for job "${job.name}" on ${QueueName.Orders}`);
    try {
      return { outcome: await this.batcher.submit(job.data) };
    } catch (error) {
      const attempts = job.opts.attempts ?? 1;
      if (job.attemptsMade + 1 < attempts) throw error; // BullMQ retries it with backoff
      // Last attempt: never drop a reservation silently. Write it FAILED and give the unit back.
      this.logger.error(`Order ${job.data.orderNo} failed ${attempts} times; marking it FAILED`, errorText(error));
      return { outcome: await this.writer.failAndRelease(job.data, FAILURE_REASONS.retriesExhausted) };
    }
  }

  @OnWorkerEvent('error')
  onError(error: Error): void {
    this.logger.error(`Worker error: ${error.message}`);
  }
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
