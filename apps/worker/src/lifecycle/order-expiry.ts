import { errorMessage } from '@flash-sale/domain';
import { OrderLifecycle, StockLeases } from '@flash-sale/stock';
import { OrderExpiryRepository, type OverdueOrder, SaleLayouts } from '@flash-sale/db';
import { buyerBucket, ReservationScripts } from '@flash-sale/redis';
import { Injectable, Logger } from '@nestjs/common';

/** Overdue orders read per query and sale (the oldest deadlines first) and moved per transaction. */
const SWEEP_PAGE = 500;
const SWEEP_BATCH = 100;
/** A sale whose expiry batch could not be applied is left alone this long, never retried in a tight loop. */
const DEFERRED_SALE_BACKOFF_MS = 5_000;

/**
 * PENDING_PAYMENT → EXPIRED once the payment deadline has passed.
 *
 * The periodic sweep (`expire-overdue-orders`, a BullMQ job scheduler every EXPIRY_SWEEP_INTERVAL_MS,
 * stored in Redis, so one run per interval per cluster) is THE expiry mechanism: writing an order
 * costs nothing for its expiry. A run costs one query on the `(status, expires_at)` index (the only
 * one when none is due), then, per sale with overdue orders, one query per 500 of them and one
 * transaction per batch of 100. An order therefore expires up to one interval after its deadline,
 * never before it. Every order, however it was written (worker,
 * db-* strategies, the Redis-down fallback), is found the same way, so none can miss its expiry.
 *
 * The guarantees are those of the compare-and-set (OrderLifecycle): of the sweep and a payment or a
 * cancel arriving at the same moment exactly one moves the order; the winner returns the unit to
 * MySQL's `available` in the same transaction (never more than the sale can hold: an oversold
 * naive-unsafe sale's surplus never existed), frees the buyer's slot in Redis (the release script,
 * exactly once) and leases the units to Redis again. Overlapping sweeps (a slow run, two workers) are
 * harmless: the loser's compare-and-set matches nothing. If the process dies between the MySQL commit
 * and the Redis release, the reconciliation job finds the EXPIRED order whose buyer Redis still counts.
 */
@Injectable()
export class OrderExpiry {
  private readonly logger = new Logger(OrderExpiry.name);

  constructor(
    private readonly expiryRepository: OrderExpiryRepository,
    private readonly lifecycle: OrderLifecycle,
    private readonly scripts: ReservationScripts,
    private readonly leases: StockLeases,
    private readonly layouts: SaleLayouts,
  ) {}

  /** saleId -> epoch ms before which the sweep leaves the sale alone (its last batch was deferred). */
  private readonly deferredUntil = new Map<string, number>();

  /**
   * Expires every PENDING_PAYMENT order whose deadline is at or before `now`, oldest first, one
   * transaction per sale and batch. Stops after `budgetMs` (the next run goes on where this one
   * stopped), so a wave of expiries does not make runs pile up. Returns how many orders it expired.
   */
  async sweep(now = new Date(), budgetMs = Number.POSITIVE_INFINITY): Promise<number> {
    const stopAt = Date.now() + budgetMs;
    // Sale by sale, so one sale's trouble (or its sheer number of overdue orders) never keeps another
    // sale's orders from expiring on time.
    let expired = 0;
    for (const saleId of await this.expiryRepository.salesWithOverdueOrders(now)) {
      if ((this.deferredUntil.get(saleId) ?? 0) > Date.now()) continue;
      this.deferredUntil.delete(saleId);
      const moved = await this.sweepSale(saleId, now, stopAt);
      expired += moved;
      // The units are back in MySQL's `available`: lease them to Redis again for the next buyers.
      if (moved > 0) await this.topUp(saleId);
      if (Date.now() >= stopAt) break;
    }
    return expired;
  }

  private async sweepSale(saleId: string, now: Date, stopAt: number): Promise<number> {
    let expired = 0;
    for (;;) {
      const orders = await this.expiryRepository.overdueOrders(saleId, now, SWEEP_PAGE);
      let movedThisPage = 0;
      for (let i = 0; i < orders.length; i += SWEEP_BATCH) {
        let won: OverdueOrder[];
        try {
          won = await this.lifecycle.expireOverdue(saleId, orders.slice(i, i + SWEEP_BATCH), now);
        } catch (error) {
          // Rolled back as a whole (e.g. optimistic-lock retries ran out on a busy sale): these orders
          // are still PENDING_PAYMENT; the sale gets a pause before the next try, other sales go on.
          this.deferredUntil.set(saleId, Date.now() + DEFERRED_SALE_BACKOFF_MS);
          this.logger.warn(`Sale ${saleId}: expiry batch deferred: ${errorMessage(error)}`);
          return expired + movedThisPage;
        }
        movedThisPage += won.length;
        await this.releaseInRedis(saleId, won);
      }
      expired += movedThisPage;
      // A short page means nothing more is due; a page that moved nothing means others (payments,
      // an overlapping sweep) own what is left, and looping would only read the same rows again.
      if (orders.length < SWEEP_PAGE || movedThisPage === 0 || Date.now() >= stopAt) return expired;
    }
  }

  private async topUp(saleId: string): Promise<void> {
    try {
      await this.leases.topUp(saleId);
    } catch (error) {
      // The units wait in `available`: the next purchase that finds Redis dry leases them.
      this.logger.warn(`Sale ${saleId}: lease top-up after expiry failed: ${errorMessage(error)}`);
    }
  }

  /** The buyers of orders the sweep expired are freed in Redis; a failure here is repaired by reconciliation. */
  private async releaseInRedis(saleId: string, orders: readonly OverdueOrder[]): Promise<void> {
    const sale = await this.layouts.of(saleId);
    const results = await Promise.allSettled(
      orders.map((order) => this.scripts.release(buyerBucket(sale, order.userId), order.orderNo)),
    );
    const failed = results.filter((result) => result.status === 'rejected').length;
    if (failed > 0) {
      this.logger.warn(
        `Sale ${saleId}: ${failed} expired order(s) not yet released in Redis; reconciliation will release them`,
      );
    }
  }
}
