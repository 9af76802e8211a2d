import type { AppConfig } from '@flash-sale/config';
import { CREATE_ORDER_JOB, type CreateOrderJobData, QueueName } from '@flash-sale/queue';
import type { RedisClient } from '@flash-sale/redis';
import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { type Job, Worker } from 'bullmq';
import { BULL_CONNECTION, QUEUE_PREFIX, WORKER_CONFIG } from '../worker.tokens';
import { OrderBatcher } from './order-batcher';
import { FAILURE_REASONS, OrderWriter, type WriteOutcome } from './order-writer';

/**
 * Consumes `create-order` jobs; the batcher turns concurrent jobs into group commits.
 *
 * The BullMQ Worker is built here rather than with @nestjs/bullmq's `@Processor`, whose worker
 * options are fixed at decoration time: concurrency and the stalled-job lock come from config.
 */
@Injectable()
export class CreateOrderProcessor implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(CreateOrderProcessor.name);
  private worker?: Worker<CreateOrderJobData, { outcome: WriteOutcome }>;

  constructor(
    private readonly batcher: OrderBatcher,
    private readonly writer: OrderWriter,
    @Inject(WORKER_CONFIG) private readonly config: AppConfig['worker'],
    @Inject(BULL_CONNECTION) private readonly connection: RedisClient,
    @Inject(QUEUE_PREFIX) private readonly prefix: string,
  ) {}

  onApplicationBootstrap(): void {
    this.worker = new Worker(QueueName.Orders, (job) => this.process(job), {
      connection: this.connection,
      prefix: this.prefix,
      concurrency: this.config.concurrency,
      // A worker that dies (SIGKILL, OOM) stops renewing its locks; after lockDuration its active
      // jobs are found stalled and handed to another worker, which writes each order at most once.
      lockDuration: this.config.lockDurationMs,
      stalledInterval: this.config.lockDurationMs,
    });
    this.worker.on('error', (error) => this.logger.error(`Worker error: ${error.message}`));
  }

  /** Graceful stop, before connections close: take no new job, let active ones finish their group commit. */
  async onModuleDestroy(): Promise<void> {
    await this.worker?.close();
  }

  /** Stops taking jobs (the active ones finish); used by tests to hold reservations in QUEUED. */
  async pause(): Promise<void> {
    await this.worker?.pause();
  }

  resume(): void {
    this.worker?.resume();
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
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
