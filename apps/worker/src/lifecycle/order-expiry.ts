import { OrderLifecycle } from '@flash-sale/db';
import { RETURNED_STATUSES } from '@flash-sale/domain';
import type { ExpireOrderJobData } from '@flash-sale/queue';
import { ReservationScripts } from '@flash-sale/redis';
import { Injectable } from '@nestjs/common';
import { DelayedError, type Job } from 'bullmq';

export type ExpiryOutcome = 'expired' | 'not-pending' | 'not-due';

/**
 * PENDING_PAYMENT → EXPIRED at the deadline. The compare-and-set decides between this job and a
 * payment (or a cancel) arriving at the same moment: exactly one of them moves the order. The winner
 * returns the unit to MySQL in the same transaction and then to Redis (release script: exactly once),
 * which also frees the buyer's slot so they, or anyone, can buy it again.
 */
@Injectable()
export class OrderExpiry {
  constructor(
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

  async expire(orderNo: string, saleId: string): Promise<ExpiryOutcome> {
    const result = await this.lifecycle.returnUnits(orderNo, 'EXPIRED');
    // Release even when another process made the move: if it died before releasing, this repairs it
    // (the script gives the unit back only once).
    if (result.order && RETURNED_STATUSES.includes(result.order.status)) await this.scripts.release(saleId, orderNo);
    return result.changed ? 'expired' : 'not-pending';
  }
}
