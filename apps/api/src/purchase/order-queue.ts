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
import type { Queue } from 'bullmq';
import { APP_CONFIG } from '../infra/tokens';

/** The API's side of the api → worker contract: it only ever adds `create-order` jobs. */
@Injectable()
export class OrderQueue {
  constructor(
    @InjectQueue(QueueName.Orders) private readonly queue: Queue<CreateOrderJobData>,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async enqueueCreateOrder(data: CreateOrderJobData): Promise<void> {
    await this.queue.add(CREATE_ORDER_JOB, data, {
      ...createOrderJobOptions(this.config.worker.jobAttempts),
      jobId: createOrderJobId(data.orderNo),
    });
  }

  /** `waiting`, `active`, `delayed`… or `unknown` when the queue no longer holds the job. */
  async stateOf(orderNo: string): Promise<string> {
    return this.queue.getJobState(createOrderJobId(orderNo));
  }
}
