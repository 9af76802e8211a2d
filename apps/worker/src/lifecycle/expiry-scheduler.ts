import { EXPIRE_ORDER_JOB, type ExpireOrderJobData, expireOrderJobOptions } from '@flash-sale/queue';
import { Inject, Injectable } from '@nestjs/common';
import type { Queue } from 'bullmq';
import { LIFECYCLE_QUEUE } from '../worker.tokens';

export interface AwaitingPayment {
  orderNo: string;
  saleId: string;
  expiresAt: Date;
}

/** Schedules one delayed `expire-order` job per order at its payment deadline (idempotent by job id). */
@Injectable()
export class ExpiryScheduler {
  constructor(@Inject(LIFECYCLE_QUEUE) private readonly queue: Queue<ExpireOrderJobData>) {}

  async schedule(orders: readonly AwaitingPayment[]): Promise<void> {
    if (orders.length === 0) return;
    const now = Date.now();
    await this.queue.addBulk(
      orders.map((order) => ({
        name: EXPIRE_ORDER_JOB,
        data: { orderNo: order.orderNo, saleId: order.saleId, expiresAt: order.expiresAt.toISOString() },
        opts: expireOrderJobOptions(order.orderNo, order.expiresAt, now),
      })),
    );
  }
}
