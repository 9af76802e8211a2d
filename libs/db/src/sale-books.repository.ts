import { type BookedOrder, HOLDING_STATUSES, type OrderStatus } from '@flash-sale/domain';
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
}

/** What MySQL says about one sale, for the audit and the reconciliation job. */
export class SaleBooksRepository {
  private readonly segments = new StockSegmentRepository();

  constructor(private readonly dataSource: DataSource) {}

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
      'SELECT stock, available, leased, in_doubt, redis_epoch, per_user_limit FROM sales WHERE id = ?',
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
    };
  }
}
