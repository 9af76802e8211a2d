import { HOLDING_STATUSES } from '@flash-sale/domain';
import type { DataSource, EntityManager } from 'typeorm';
import type { IsolationLevel } from 'typeorm/driver/types/IsolationLevel';
import { OrderEntity } from './entities/order.entity';

/** What a buyer holds in a sale, for the per-user limit and the order's purchase slot. */
export interface BuyerHolding {
  units: number;
  /** The buyer's lowest purchase slot not taken by a holding order. */
  freeSlot: number;
}

/** The order a submit token made. */
export interface OrderOfSubmitToken {
  orderNo: string;
  userId: string;
}

/**
 * The MySQL side of the synchronous strategies (db-optimistic, db-pessimistic, naive-unsafe, and the
 * Redis-down fallback): the facts their purchase rules need and the writes of an accepted purchase.
 * Which guard a strategy puts around them is the strategy's choice (apps/api/src/purchase/db-purchase.ts);
 * db-optimistic's versioned read and update are SaleStockRepository's.
 */
export class StrategyPurchaseRepository {
  constructor(private readonly dataSource: DataSource) {}

  transaction<T>(work: (manager: EntityManager) => Promise<T>, isolation?: IsolationLevel): Promise<T> {
    return isolation ? this.dataSource.transaction(isolation, work) : this.dataSource.transaction(work);
  }

  /** Statements on their own, each committed at once: what naive-unsafe runs. */
  get withoutTransaction(): EntityManager {
    return this.dataSource.manager;
  }

  /** The sale's `available`, its row locked until the transaction ends (db-pessimistic). */
  async availableForUpdate(manager: EntityManager, saleId: string): Promise<number> {
    return this.available(manager, saleId, ' FOR UPDATE');
  }

  /** The sale's `available`, read without any lock or version. */
  async availableUnguarded(manager: EntityManager, saleId: string): Promise<number> {
    return this.available(manager, saleId, '');
  }

  /** Takes units from a row the caller holds locked (see `availableForUpdate`). */
  async takeUnitsLocked(manager: EntityManager, saleId: string, units: number): Promise<void> {
    await manager.query('UPDATE sales SET available = available - ?, version = version + 1 WHERE id = ?', [
      units,
      saleId,
    ]);
  }

  /**
   * UNSAFE ON PURPOSE (naive-unsafe): writes `available` as the caller computed it from an unguarded
   * read, so a concurrent buyer's update in between is lost.
   */
  async overwriteAvailable(manager: EntityManager, saleId: string, available: number): Promise<void> {
    await manager.query('UPDATE sales SET available = ? WHERE id = ?', [available, saleId]);
  }

  async buyerHolding(manager: EntityManager, saleId: string, userId: string): Promise<BuyerHolding> {
    const rows = (await manager.query(
      `SELECT quantity, user_slot FROM orders WHERE sale_id = ? AND user_id = ? AND status IN (${HOLDING_STATUSES.map(() => '?').join(', ')})`,
      [saleId, userId, ...HOLDING_STATUSES],
    )) as { quantity: number; user_slot: number | null }[];
    const taken = new Set(rows.map((row) => Number(row.user_slot)));
    let freeSlot = 1;
    while (taken.has(freeSlot)) freeSlot += 1;
    return { units: rows.reduce((units, row) => units + Number(row.quantity), 0), freeSlot };
  }

  /** Unique order number, purchase slot and submit token: a duplicate is refused with ER_DUP_ENTRY. */
  async insertOrder(manager: EntityManager, order: Partial<OrderEntity>): Promise<void> {
    await manager.getRepository(OrderEntity).insert(order);
  }

  /** The order a submit token made, by any path that writes one synchronously. */
  async orderOfSubmitToken(submitToken: string): Promise<OrderOfSubmitToken | undefined> {
    const order = await this.dataSource.getRepository(OrderEntity).findOne({
      select: { orderNo: true, userId: true },
      where: { submitToken },
    });
    return order ? { orderNo: order.orderNo, userId: order.userId } : undefined;
  }

  private async available(manager: EntityManager, saleId: string, lock: '' | ' FOR UPDATE'): Promise<number> {
    const [row] = (await manager.query(`SELECT available FROM sales WHERE id = ?${lock}`, [saleId])) as {
      available: number;
    }[];
    return Number(row?.available ?? 0);
  }
}
