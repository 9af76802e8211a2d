import type { AppConfig } from '@flash-sale/config';
import {
  CREATE_ORDER_JOB,
  type CreateOrderJobData,
  createOrderJobId,
  createOrderJobOptions,
  QueueName,
} from '@flash-sale/queue';
import { InjectQueue } from '@nestjs/bullmq';
import { Inject, Injectable } from '@nestjs/common';
import type { JobsOptions, Queue } from 'bullmq';
import { APP_CONFIG } from '../infra/tokens';

interface PendingAdd {
  data: CreateOrderJobData;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * The API's side of the api → worker contract: it only ever adds `create-order` jobs.
 *
 * Adds made in the same turn of the event loop go to Redis together, as one BullMQ `addBulk` (one
 * pipeline: one socket write, one round trip), rather than one write and one round trip each. Under
 * load one turn resolves several reservation scripts at once (their replies arrive in one read), so
 * this saves most of the per-purchase network cost of the enqueue; when idle a batch is a single add.
 * Every caller still learns whether its own job went in: a batch that fails fails all its callers
 * (503), and a retry with the same submit token replays the reservation and adds its job again —
 * a no-op for a job that did get in, since the job id is the order number.
 */
@Injectable()
export class OrderQueue {
  private pending: PendingAdd[] = [];
  private readonly jobOptions: JobsOptions;

  constructor(
    @InjectQueue(QueueName.Orders) private readonly queue: Queue<CreateOrderJobData>,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.jobOptions = createOrderJobOptions(config.worker.jobAttempts);
  }

  enqueueCreateOrder(data: CreateOrderJobData): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ data, resolve, reject });
      // After this turn's I/O callbacks and microtasks: every add they make joins this batch.
      if (this.pending.length === 1) setImmediate(() => void this.flush());
    });
  }

  /** `waiting`, `active`, `delayed`… or `unknown` when the queue no longer holds the job. */
  async stateOf(orderNo: string): Promise<string> {
    return this.queue.getJobState(createOrderJobId(orderNo));
  }

  private async flush(): Promise<void> {
    const batch = this.pending;
    this.pending = [];
    try {
      await this.queue.addBulk(
        batch.map(({ data }) => ({
          name: CREATE_ORDER_JOB,
          data,
          opts: { ...this.jobOptions, jobId: createOrderJobId(data.orderNo) },
        })),
      );
      for (const add of batch) add.resolve();
    } catch (error) {
      for (const add of batch) add.reject(error);
    }
  }
}
