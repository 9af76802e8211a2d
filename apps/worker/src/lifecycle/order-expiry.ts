import { OrderLifecycle, type OverdueOrder } from '@flash-sale/db';
import { RETURNED_STATUSES } from '@flash-sale/domain';
import type { LegacyExpireOrderJobData } from '@flash-sale/queue';
import { ReservationScripts } from '@flash-sale/redis';
import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Job } from 'bullmq';
import type { DataSource } from 'typeorm';

export type ExpiryOutcome = 'expired' | 'not-pending' | 'not-due';

/** Overdue orders read per query (the oldest deadlines first) and moved per transaction. */
const SWEEP_PAGE = 500;
const SWEEP_BATCH = 100;

/**
 * PENDING_PAYMENT → EXPIRED once the payment deadline has passed.
 *
 * The periodic sweep (`expire-overdue-orders`, a BullMQ job scheduler every EXPIRY_SWEEP_INTERVAL_MS,
 * stored in Redis, so one run per interval per cluster) is THE expiry mechanism. It replaced one
 * delayed `expire-order` job per order, which cost an extra Redis script for every order written (the
 * benchmark's drain fell from 5,900–7,200 to 3,700–4,400 orders/s). Writing an order now costs nothing
 * for its expiry; a run costs one query on the `(status, expires_at)` index per 500 overdue orders
 * (one when none is due) and one transaction per sale and batch of 100. An order therefore expires up
 * to one interval after its deadline, never before it. Every order, however it was written (worker,
 * db-* strategies, the Redis-down fallback), is found the same way, so none can miss its expiry.
 *
 * The guarantees are those of the compare-and-set (OrderLifecycle): of the sweep and a payment or a
 * cancel arriving at the same moment exactly one moves the order; the winner returns the unit to
 * MySQL in the same transaction and then to Redis (the release script gives it back exactly once),
 * which also frees the buyer's slot. Overlapping sweeps (a slow run, two workers) are harmless: the
 * loser's compare-and-set matches nothing. If the process dies between the MySQL commit and the Redis
 * release, the reconciliation job finds the EXPIRED order whose unit Redis never got and releases it.
 */
@Injectable()
export class OrderExpiry {
  private readonly logger = new Logger(OrderExpiry.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly lifecycle: OrderLifecycle,
    private readonly scripts: ReservationScripts,
  ) {}

  /**
   * Expires every PENDING_PAYMENT order whose deadline is at or before `now`, oldest first, one
   * transaction per sale and batch. Stops after `budgetMs` (the next run goes on where this one
   * stopped), so a wave of expiries does not make runs pile up. Returns how many orders it expired.
   */
  async sweep(now = new Date(), budgetMs = Number.POSITIVE_INFINITY): Promise<number> {
    const stopAt = Date.now() + budgetMs;
    let expired = 0;
    for (;;) {
      const overdue = (await this.dataSource.query(
        `SELECT order_no, sale_id, version, quantity FROM orders
          WHERE status = 'PENDING_PAYMENT' AND expires_at <= ? ORDER BY expires_at LIMIT ${SWEEP_PAGE}`,
        [now],
      )) as { order_no: string; sale_id: string; version: number; quantity: number }[];
      const bySale = new Map<string, OverdueOrder[]>();
      for (const row of overdue) {
        const saleId = String(row.sale_id);
        const orders = bySale.get(saleId) ?? [];
        orders.push({ orderNo: row.order_no, version: Number(row.version), quantity: Number(row.quantity) });
        bySale.set(saleId, orders);
      }
      let movedThisPage = 0;
      for (const [saleId, orders] of bySale) {
        for (let i = 0; i < orders.length; i += SWEEP_BATCH) {
          let won: OverdueOrder[];
          try {
            won = await this.lifecycle.expireOverdue(saleId, orders.slice(i, i + SWEEP_BATCH), now);
          } catch (error) {
            // Rolled back as a whole (e.g. optimistic-lock retries ran out on a busy sale): these
            // orders are still PENDING_PAYMENT and the next run takes them; other sales go on.
            this.logger.warn(`Sale ${saleId}: expiry batch deferred to the next sweep: ${errorText(error)}`);
            continue;
          }
          movedThisPage += won.length;
          await this.releaseInRedis(saleId, won);
        }
      }
      expired += movedThisPage;
      // A short page means nothing more is due; a page that moved nothing means others (payments,
      // an overlapping sweep) own what is left, and looping would only read the same rows again.
      if (overdue.length < SWEEP_PAGE || movedThisPage === 0 || Date.now() >= stopAt) return expired;
    }
  }

  /**
   * One order, now (tests, repairs, legacy jobs). Like the sweep, a compare-and-set: safe to race
   * with a payment, a cancel or the sweep itself.
   */
  async expire(orderNo: string, saleId: string): Promise<ExpiryOutcome> {
    const result = await this.lifecycle.returnUnits(orderNo, 'EXPIRED');
    // Release even when another process made the move: if it died before releasing, this repairs it
    // (the script gives the unit back only once).
    if (result.order && RETURNED_STATUSES.includes(result.order.status)) await this.scripts.release(saleId, orderNo);
    return result.changed ? 'expired' : 'not-pending';
  }

  /**
   * A delayed `expire-order` job left in Redis by an earlier version: expire the order if it is due;
   * if not, the sweep will at its deadline.
   */
  async runLegacyJob(job: Job<LegacyExpireOrderJobData>): Promise<ExpiryOutcome> {
    if (new Date(job.data.expiresAt).getTime() > Date.now()) return 'not-due';
    return this.expire(job.data.orderNo, job.data.saleId);
  }

  /** The units of orders the sweep expired go back to Redis; a failure here is repaired by reconciliation. */
  private async releaseInRedis(saleId: string, orders: readonly OverdueOrder[]): Promise<void> {
    const results = await Promise.allSettled(orders.map((order) => this.scripts.release(saleId, order.orderNo)));
    const failed = results.filter((result) => result.status === 'rejected').length;
    if (failed > 0) {
      this.logger.warn(
        `Sale ${saleId}: ${failed} expired order(s) not yet released in Redis; reconciliation will release them`,
      );
    }
  }
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
