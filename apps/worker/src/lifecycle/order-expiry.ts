import { OrderLifecycle } from '@flash-sale/db';
import { RETURNED_STATUSES } from '@flash-sale/domain';
import type { ExpireOrderJobData } from '@flash-sale/queue';
import { ReservationScripts } from '@flash-sale/redis';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DelayedError, type Job } from 'bullmq';
import type { DataSource } from 'typeorm';

export type ExpiryOutcome = 'expired' | 'not-pending' | 'not-due';

/** The expiry job normally fires at the deadline; the sweep only takes what it clearly missed. */
const OVERDUE_GRACE_MS = 5_000;

/**
 * PENDING_PAYMENT → EXPIRED at the deadline. The compare-and-set decides between this job and a
 * payment (or a cancel) arriving at the same moment: exactly one of them moves the order. The winner
 * returns the unit to MySQL in the same transaction and then to Redis (release script: exactly once),
 * which also frees the buyer's slot so they, or anyone, can buy it again.
 */
@Injectable()
export class OrderExpiry {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly lifecycle: OrderLifecycle,
    private readonly scripts: ReservationScripts,
  ) {}

  async run(job: Job<ExpireOrderJobData>, token?: string): Promise<ExpiryOutcome> {
    const due = new Date(job.data.expiresAt).getTime();
    if (due > Date.now() && token) {
      // Delivered early (clock skew between hosts): wait for the deadline rather than cut it short.
      await job.moveToDelayed(due, token);
      throw new DelayedError();
    }
    return this.expire(job.data.orderNo, job.data.saleId);
  }

  /**
   * Backstop for orders whose expiry job was never added (written while Redis was down, by the
   * fallback): expires PENDING_PAYMENT orders past their deadline. Returns how many it expired.
   */
  async expireOverdue(now = new Date()): Promise<number> {
    const overdue = (await this.dataSource.query(
      `SELECT order_no, sale_id FROM orders WHERE status = 'PENDING_PAYMENT' AND expires_at < ? LIMIT 500`,
      [new Date(now.getTime() - OVERDUE_GRACE_MS)],
    )) as { order_no: string; sale_id: string }[];
    let expired = 0;
    for (const order of overdue) {
      if ((await this.expire(order.order_no, String(order.sale_id))) === 'expired') expired += 1;
    }
    return expired;
  }

  async expire(orderNo: string, saleId: string): Promise<ExpiryOutcome> {
    const result = await this.lifecycle.returnUnits(orderNo, 'EXPIRED');
    // Release even when another process made the move: if it died before releasing, this repairs it
    // (the script gives the unit back only once).
    if (result.order && RETURNED_STATUSES.includes(result.order.status)) await this.scripts.release(saleId, orderNo);
    return result.changed ? 'expired' : 'not-pending';
  }
}
