import type { OrderEntity } from '@flash-sale/db';
import { EXPIRE_ORDER_JOB, type ExpireOrderJobData, expireOrderJobOptions, QueueName } from '@flash-sale/queue';
import { InjectQueue } from '@nestjs/bullmq';
import { Injectable, Logger } from '@nestjs/common';
import type { Queue } from 'bullmq';

/**
 * Expiry for orders the API writes itself (db-* strategies, Redis-down fallback). If Redis is down
 * the job cannot be added; the worker's overdue sweep expires such orders once their deadline passes.
 */
@Injectable()
export class OrderExpiryQueue {
  private readonly logger = new Logger(OrderExpiryQueue.name);

  constructor(@InjectQueue(QueueName.OrderLifecycle) private readonly queue: Queue<ExpireOrderJobData>) {}

  async schedule(order: Partial<OrderEntity>): Promise<void> {
    const expiresAt = order.expiresAt!;
    try {
      await this.queue.add(
        EXPIRE_ORDER_JOB,
        { orderNo: order.orderNo!, saleId: order.saleId!, expiresAt: expiresAt.toISOString() },
        expireOrderJobOptions(order.orderNo!, expiresAt),
      );
    } catch (error) {
      this.logger.warn(
        `Expiry of ${order.orderNo} left to the overdue sweep: ${error instanceof Error ? error.message : error}`,
      );
    }
  }
}
