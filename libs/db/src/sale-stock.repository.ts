import {
  HOLDING_STATUSES,
  returnedUnitsMove,
  type SaleDefinition,
  type SaleStockCounts,
  type StockMove,
} from '@flash-sale/domain';
import type { EntityManager } from 'typeorm';

/** The `sales` columns of SaleStockCounts, for a SELECT that reads them with `saleStockCountsOf`. */
export const SALE_STOCK_COLUMNS = 'available, leased, in_doubt, redis_epoch, settled_epoch';

export function saleStockCountsOf(row: Record<string, unknown>): SaleStockCounts {
  return {
    available: Number(row['available']),
    leased: Number(row['leased']),
    inDoubt: Number(row['in_doubt']),
    redisEpoch: Number(row['redis_epoch']),
    settledEpoch: Number(row['settled_epoch']),
  };
}

/** A sale's row as the order writers need it: its stock counts, what an order copies, and its version. */
export type SaleStockRow = SaleStockCounts &
  Pick<SaleDefinition, 'stock' | 'priceCents' | 'paymentTimeoutSeconds'> & {
    /** The optimistic lock: every change of `available` is conditional on it and bumps it. */
    version: number;
  };

/**
 * MySQL stock of a sale, behind the optimistic lock. Every order's units come off this one hot row,
 * so callers take units for many orders at once (group commit) and update it last in their
 * transaction, holding its row lock for as short a time as possible.
 */
export class SaleStockRepository {
  /** A plain read: no lock. The version makes the later update safe. */
  async read(manager: EntityManager, saleId: string): Promise<SaleStockRow | undefined> {
    const [row] = (await manager.query(
      `SELECT stock, price_cents, ${SALE_STOCK_COLUMNS}, version, payment_timeout_seconds FROM sales WHERE id = ?`,
      [saleId],
    )) as Record<string, number>[];
    return row
      ? {
          ...saleStockCountsOf(row),
          stock: Number(row['stock']),
          priceCents: Number(row['price_cents']),
          version: Number(row['version']),
          paymentTimeoutSeconds: Number(row['payment_timeout_seconds']),
        }
      : undefined;
  }

  /**
   * Takes `units` from `available` if the row is still at `expectedVersion` and has them (MySQL
   * selling itself: the db-* strategies, the Redis-down fallback). False means someone else changed
   * the row since `read` (an optimistic-lock conflict): the caller rolls back and retries.
   */
  async takeUnits(manager: EntityManager, saleId: string, expectedVersion: number, units: number): Promise<boolean> {
    return this.move(manager, saleId, expectedVersion, { available: -units, leased: 0, inDoubt: 0 });
  }

  /**
   * Applies `move` (libs/domain stock-moves.ts) if the row is still at `expectedVersion`, raising the
   * recorded oversell peak to `oversoldPeak` where that is higher. The caller computed
   * it from the row it read at that version, so no column can go below zero.
   */
  async move(
    manager: EntityManager,
    saleId: string,
    expectedVersion: number,
    move: StockMove,
    oversoldPeak = 0,
  ): Promise<boolean> {
    // The peak only where one is given (a give-back of an oversold sale): every other move, the purchase
    // path's included, runs the statement it always ran.
    const peak = oversoldPeak > 0 ? ', oversold_peak = GREATEST(oversold_peak, ?)' : '';
    const result = (await manager.query(
      `UPDATE sales SET available = available + ?, leased = leased + ?, in_doubt = in_doubt + ?, version = version + 1${peak}
        WHERE id = ? AND version = ?`,
      [move.available, move.leased, move.inDoubt, ...(oversoldPeak > 0 ? [oversoldPeak] : []), saleId, expectedVersion],
    )) as { affectedRows: number };
    return result.affectedRows === 1;
  }

  /**
   * Gives back the units of cancelled or expired orders (returnedUnitsMove: never more than the sale can
   * hold) if the row is still at the version `sale` was read at.
   */
  async returnUnits(manager: EntityManager, saleId: string, sale: SaleStockRow, units: number): Promise<boolean> {
    // The caller ended the orders first, in this transaction: what they held a moment ago is what is still
    // held plus what they give back. The one moment an oversell can leave the books is just before this,
    // so the peak is recorded here (read before the hot row's lock is taken, never under it).
    const heldBefore = (await this.heldUnits(manager, saleId)) + units;
    const oversoldBefore = Math.max(0, heldBefore - sale.stock);
    return this.move(manager, saleId, sale.version, returnedUnitsMove(sale, units), oversoldBefore);
  }

  /** Units the sale's PENDING_PAYMENT and PAID orders hold (from the orders' index by sale and status). */
  private async heldUnits(manager: EntityManager, saleId: string): Promise<number> {
    const [row] = (await manager.query(
      `SELECT COALESCE(SUM(quantity), 0) AS held FROM orders
        WHERE sale_id = ? AND status IN (${HOLDING_STATUSES.map(() => '?').join(', ')})`,
      [saleId, ...HOLDING_STATUSES],
    )) as { held: string | number }[];
    return Number(row?.held ?? 0);
  }
}
