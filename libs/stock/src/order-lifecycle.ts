import type { OrderTransitionRepository, OverdueOrder, ReturningStatus, TransitionResult } from '@flash-sale/db';
import type { SaleActivity } from '@flash-sale/redis';
import { markSaleChanged } from './sale-marks';

/**
 * Status changes of written orders (docs/architecture.md "After the purchase"): the compare-and-sets of
 * OrderTransitionRepository, each followed by a mark of its sale in the active-sales index, so that
 * reconciliation visits it.
 */
export class OrderLifecycle {
  constructor(
    private readonly transitions: OrderTransitionRepository,
    /** Absent where tests drive orders by hand. */
    private readonly activity?: SaleActivity,
  ) {}

  /**
   * PENDING_PAYMENT → CANCELLED / EXPIRED, and the units back into MySQL stock, in one transaction:
   * only the caller whose compare-and-set wins returns them, so they go back exactly once. The order
   * frees its purchase slot so the buyer may buy again. Redis is the caller's next step.
   */
  async returnUnits(orderNo: string, to: ReturningStatus): Promise<TransitionResult> {
    const result = await this.transitions.returnUnits(orderNo, to);
    if (result.changed) await markSaleChanged(this.activity, result.order.saleId);
    return result;
  }

  /**
   * PENDING_PAYMENT → EXPIRED for many overdue orders of one sale in one transaction (the expiry
   * sweep's group commit). Returns the orders this call moved (their units are the caller's to give
   * back to Redis).
   */
  async expireOverdue(saleId: string, orders: readonly OverdueOrder[], dueBy: Date): Promise<OverdueOrder[]> {
    const won = await this.transitions.expireOverdue(saleId, orders, dueBy);
    if (won.length > 0) await markSaleChanged(this.activity, saleId);
    return won;
  }

  /**
   * An order of the sale was paid (its PENDING_PAYMENT → PAID committed with its payment, in libs/db's
   * PaymentTransaction): the sale is marked for reconciliation like every other change of its orders.
   */
  async orderPaid(saleId: string): Promise<void> {
    await markSaleChanged(this.activity, saleId);
  }
}
