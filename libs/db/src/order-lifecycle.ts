import type { OrderStatus } from '@flash-sale/domain';
import { canTransition } from '@flash-sale/domain';
import type { DataSource, EntityManager } from 'typeorm';
import { OrderEntity } from './entities/order.entity';
import { OptimisticConflict, withOptimisticRetries } from './optimistic-retry';
import { SaleStockRepository } from './sale-stock.repository';

export type ReturningStatus = 'CANCELLED' | 'EXPIRED';

export type TransitionResult =
  | { changed: true; order: OrderEntity }
  /** The order was not in a state allowing the move (someone else moved it first, or it never could). */
  | { changed: false; order: OrderEntity | null };

/**
 * Status changes of written orders (DESIGN.md step 6). Every change is a compare-and-set on
 * (status, version), allowed only by the state machine table, so of two racing changes (a payment
 * and an expiry, say) exactly one matches the row and the other sees it already moved.
 *
 * Runs at READ COMMITTED so each read sees the latest committed row: with the sales row updated
 * thousands of times a second, a REPEATABLE READ snapshot would make every optimistic update stale.
 */
export class OrderLifecycle {
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
  async returnUnits(orderNo: string, to: ReturningStatus): Promise<TransitionResult> {
    return withOptimisticRetries(
      () =>
        this.dataSource.transaction('READ COMMITTED', async (manager) => {
          const order = await manager.getRepository(OrderEntity).findOneBy({ orderNo });
          if (!order || !canTransition(order.status, to)) return { changed: false, order } as const;
          if (!(await this.compareAndSet(manager, order, to, { user_slot: null }))) {
            return { changed: false, order: await manager.getRepository(OrderEntity).findOneBy({ orderNo }) } as const;
          }
          const sale = await this.saleStock.read(manager, order.saleId);
          if (!sale || !(await this.saleStock.returnUnits(manager, order.saleId, sale.version, order.quantity))) {
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
