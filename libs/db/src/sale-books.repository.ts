import { type BookedOrder, HOLDING_STATUSES, type OrderStatus, type SaleStrategy } from '@flash-sale/domain';
import type { DataSource, EntityManager } from 'typeorm';
import { StockSegmentRepository } from './stock-segments';

export interface MySqlSaleBooks {
  stock: number;
  /** Neither leased nor held: the sale row's `available` plus a db-segmented sale's segments. */
  available: number;
  leased: number;
  inDoubt: number;
  redisEpoch: number;
  rows: BookedOrder[];
  /** Units any single buyer holds above the per-user limit, summed over buyers. */
  unitsAboveUserLimit: number;
  /** The most units the orders held beyond the stock before a cancel or expiry gave some back (`sales.oversold_peak`). */
  oversoldPeak: number;
}

/** A sale's stock against the units its orders hold (PENDING_PAYMENT + PAID). */
export interface SaleHolding {
  saleId: string;
  strategy: SaleStrategy;
  stock: number;
  held: number;
  /** `sales.oversold_peak`: the recorded peak, which `held` may have fallen below since. */
  oversoldPeak: number;
}

/** What MySQL says about one sale, for the audit and the reconciliation job. */
export class SaleBooksRepository {
  private readonly segments = new StockSegmentRepository();

  constructor(private readonly dataSource: DataSource) {}

  /**
   * Stock and held units of every sale, of any strategy, that ends after `since`, and of every sale that
   * was ever oversold however long ago it ended (/metrics: oversold). One grouped read over the orders
   * index by sale and status.
   */
  async recentHoldings(since: Date): Promise<SaleHolding[]> {
    const holding = HOLDING_STATUSES.map(() => '?').join(', ');
    const rows = (await this.dataSource.query(
      `SELECT s.id, s.strategy, s.stock, s.oversold_peak, COALESCE(SUM(o.quantity), 0) AS held
         FROM sales s LEFT JOIN orders o ON o.sale_id = s.id AND o.status IN (${holding})
        WHERE s.ends_at > ? OR s.oversold_peak > 0
        GROUP BY s.id, s.strategy, s.stock, s.oversold_peak`,
      [...HOLDING_STATUSES, since],
    )) as {
      id: string | number;
      strategy: SaleStrategy;
      stock: string | number;
      oversold_peak: string | number;
      held: string | number;
    }[];
    return rows.map((row) => ({
      saleId: String(row.id),
      strategy: row.strategy,
      stock: Number(row.stock),
      held: Number(row.held),
      oversoldPeak: Number(row.oversold_peak),
    }));
  }

  /**
   * Raises the recorded peak of each sale to the oversell seen now, where it is higher: an oversell whose
   * orders are paid is never given back, so no give-back records it, and the sale's series would end with
   * its window otherwise.
   */
  async recordOversoldPeaks(seen: readonly { saleId: string; oversold: number }[]): Promise<void> {
    for (const { saleId, oversold } of seen) {
      await this.dataSource.query('UPDATE sales SET oversold_peak = ? WHERE id = ? AND oversold_peak < ?', [
        oversold,
        saleId,
        oversold,
      ]);
    }
  }

  /**
   * The sale's row and its orders from ONE snapshot (a REPEATABLE READ transaction): read apart, a
   * batch committed between the two reads would show units taken from `leased` by rows not read yet,
   * or rows whose units the row read still counts as leased — a drift that is not there.
   */
  async read(saleId: string): Promise<MySqlSaleBooks | undefined> {
    return this.dataSource.transaction('REPEATABLE READ', (manager) => this.readIn(manager, saleId));
  }

  private async readIn(manager: EntityManager, saleId: string): Promise<MySqlSaleBooks | undefined> {
    const [sale] = (await manager.query(
      'SELECT stock, available, leased, in_doubt, redis_epoch, per_user_limit, oversold_peak FROM sales WHERE id = ?',
      [saleId],
    )) as Record<string, number>[];
    if (!sale) return undefined;
    const segmented = await this.segments.available(manager, saleId);
    const holding = HOLDING_STATUSES.map(() => '?').join(', ');
    // One connection, one query at a time: the transaction's snapshot holds for all four.
    const rows = (await manager.query('SELECT order_no, status, quantity, lease_epoch FROM orders WHERE sale_id = ?', [
      saleId,
    ])) as { order_no: string; status: OrderStatus; quantity: number; lease_epoch: number | null }[];
    const [excess] = (await manager.query(
      `SELECT COALESCE(SUM(GREATEST(units - ?, 0)), 0) AS excess
           FROM (SELECT SUM(quantity) AS units FROM orders
                  WHERE sale_id = ? AND status IN (${holding}) GROUP BY user_id) AS per_user`,
      [sale['per_user_limit'], saleId, ...HOLDING_STATUSES],
    )) as { excess: string | number }[];
    return {
      stock: Number(sale['stock']),
      available: Number(sale['available']) + segmented,
      leased: Number(sale['leased']),
      inDoubt: Number(sale['in_doubt']),
      redisEpoch: Number(sale['redis_epoch']),
      rows: rows.map((row) => ({
        orderNo: row.order_no,
        status: row.status,
        quantity: Number(row.quantity),
        leaseEpoch: row.lease_epoch === null ? null : Number(row.lease_epoch),
      })),
      unitsAboveUserLimit: Number(excess?.excess ?? 0),
      oversoldPeak: Number(sale['oversold_peak']),
    };
  }
}
