import type { DataSource } from 'typeorm';
import type { OverdueOrder } from './order-transition.repository';

/**
 * The expiry sweep's reads: PENDING_PAYMENT orders whose payment deadline has passed, found on the
 * `(status, expires_at)` index. The moves themselves are OrderTransitionRepository's compare-and-sets.
 */
export class OrderExpiryRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** The sales that have an order due by `dueBy`. */
  async salesWithOverdueOrders(dueBy: Date): Promise<string[]> {
    const rows = (await this.dataSource.query(
      `SELECT DISTINCT sale_id FROM orders WHERE status = 'PENDING_PAYMENT' AND expires_at <= ?`,
      [dueBy],
    )) as { sale_id: string | number }[];
    return rows.map((row) => String(row.sale_id));
  }

  /** Up to `limit` of the sale's orders due by `dueBy`, the oldest deadlines first. */
  async overdueOrders(saleId: string, dueBy: Date, limit: number): Promise<OverdueOrder[]> {
    const rows = (await this.dataSource.query(
      `SELECT order_no, user_id, version, quantity FROM orders
        WHERE sale_id = ? AND status = 'PENDING_PAYMENT' AND expires_at <= ? ORDER BY expires_at LIMIT ${Math.trunc(limit)}`,
      [saleId, dueBy],
    )) as { order_no: string; user_id: string; version: number; quantity: number }[];
    return rows.map((row) => ({
      orderNo: row.order_no,
      userId: row.user_id,
      version: Number(row.version),
      quantity: Number(row.quantity),
    }));
  }
}
