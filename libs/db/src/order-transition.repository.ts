import type { OrderStatus } from '@flash-sale/domain';
import { canTransition } from '@flash-sale/domain';
import type { DataSource, EntityManager } from 'typeorm';
import { OrderEntity } from './entities/order.entity';
import { OptimisticConflict, withOptimisticRetries } from './optimistic-retry';
import { SaleStockRepository } from './sale-stock.repository';

export type ReturningStatus = 'CANCELLED' | 'EXPIRED';

/** An order the expiry sweep found overdue, as it read it (the version is the compare-and-set's). */
export interface OverdueOrder {
  orderNo: string;
  userId: string;
  version: number;
  quantity: number;
}

export type TransitionResult =
  | { changed: true; order: OrderEntity }
  /** The order was not in a state allowing the move (someone else moved it first, or it never could). */
  | { changed: false; order: OrderEntity | null };

/**
 * Status changes of written orders in MySQL (docs/architecture.md "After the purchase"). Every change is
 * a compare-and-set on (status, version), allowed only by the state machine table, so of two racing
 * changes (a payment and an expiry, say) exactly one matches the row and the other sees it already moved.
 * Apps make them through OrderLifecycle (libs/stock), which also marks the sale for reconciliation.
 *
 * Runs at READ COMMITTED so each read sees the latest committed row: with the sales row updated
 * thousands of times a second, a REPEATABLE READ snapshot would make every optimistic update stale.
 */
export class OrderTransitionRepository {
  constructor(
    private readonly dataSource: DataSource,
    private readonly saleStock: SaleStockRepository,
    private readonly optimisticRetries: number,
  ) {}

  /**
   * PENDING_PAYMENT → CANCELLED / EXPIRED, and the units back into MySQL stock, in one transaction:
   * only the caller whose compare-and-set wins returns them, so they go back exactly once. The order
   * frees its purchase slot (user_slot NULL) so the buyer may buy again. Redis is the caller's next step.
   */
  returnUnits(orderNo: string, to: ReturningStatus): Promise<TransitionResult> {
    return withOptimisticRetries(
      () =>
        this.dataSource.transaction('READ COMMITTED', async (manager) => {
          const order = await manager.getRepository(OrderEntity).findOneBy({ orderNo });
          if (!order || !canTransition(order.status, to)) return { changed: false, order } as const;
          if (!(await this.compareAndSet(manager, order, to, { user_slot: null }))) {
            return { changed: false, order: await manager.getRepository(OrderEntity).findOneBy({ orderNo }) } as const;
          }
          const sale = await this.saleStock.read(manager, order.saleId);
          if (!sale || !(await this.saleStock.returnUnits(manager, order.saleId, sale, order.quantity))) {
            throw new OptimisticConflict();
          }
          return {
            changed: true,
            order: { ...order, status: to, version: order.version + 1, userSlot: null },
          } as const;
        }),
      { retries: this.optimisticRetries },
    );
  }

  /**
   * PENDING_PAYMENT → EXPIRED for many overdue orders of one sale in one transaction — the expiry
   * sweep's group commit. Each order still moves by its own compare-and-set on (status, version), so
   * of this and a payment or cancel racing it exactly one wins; the units of the orders this call won
   * go back to MySQL stock with one optimistic update of the hot sales row, last, as the order writer
   * takes them. Orders are locked in order-number order, so two overlapping sweeps never deadlock on
   * each other. `dueBy` is checked again in the update: an order is never expired before its deadline.
   * Returns the orders this call moved (their units are the caller's to give back to Redis).
   */
  expireOverdue(saleId: string, orders: readonly OverdueOrder[], dueBy: Date): Promise<OverdueOrder[]> {
    const sorted = [...orders].sort((a, b) => (a.orderNo < b.orderNo ? -1 : a.orderNo > b.orderNo ? 1 : 0));
    return withOptimisticRetries(
      () =>
        this.dataSource.transaction('READ COMMITTED', async (manager) => {
          const won: OverdueOrder[] = [];
          for (const order of sorted) {
            const result = (await manager.query(
              `UPDATE orders SET status = 'EXPIRED', version = version + 1, user_slot = NULL
                WHERE order_no = ? AND sale_id = ? AND status = 'PENDING_PAYMENT' AND version = ? AND expires_at <= ?`,
              [order.orderNo, saleId, order.version, dueBy],
            )) as { affectedRows: number };
            if (result.affectedRows === 1) won.push(order);
          }
          const units = won.reduce((sum, order) => sum + order.quantity, 0);
          if (units > 0) {
            const sale = await this.saleStock.read(manager, saleId);
            // A conflict rolls back every move above too; the retry starts from the same versions.
            if (!sale || !(await this.saleStock.returnUnits(manager, saleId, sale, units))) {
              throw new OptimisticConflict();
            }
          }
          return won;
        }),
      { retries: this.optimisticRetries },
    );
  }

  /** PENDING_PAYMENT → PAID inside the caller's transaction (the payment is recorded in the same one). */
  async markPaid(manager: EntityManager, orderNo: string, paidAt: Date): Promise<TransitionResult> {
    const order = await manager.getRepository(OrderEntity).findOneBy({ orderNo });
    if (!order || !canTransition(order.status, 'PAID')) return { changed: false, order };
    if (!(await this.compareAndSet(manager, order, 'PAID', { paid_at: paidAt }))) {
      return { changed: false, order: await manager.getRepository(OrderEntity).findOneBy({ orderNo }) };
    }
    return { changed: true, order: { ...order, status: 'PAID', version: order.version + 1, paidAt } };
  }

  private async compareAndSet(
    manager: EntityManager,
    order: OrderEntity,
    to: OrderStatus,
    extra: Record<string, Date | null>,
  ): Promise<boolean> {
    const columns = Object.keys(extra);
    const result = (await manager.query(
      `UPDATE orders SET status = ?, version = version + 1${columns.map((column) => `, ${column} = ?`).join('')}
        WHERE order_no = ? AND status = ? AND version = ?`,
      [to, ...Object.values(extra), order.orderNo, order.status, order.version],
    )) as { affectedRows: number };
    return result.affectedRows === 1;
  }
}
