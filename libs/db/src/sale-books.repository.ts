import { type BookedOrder, HOLDING_STATUSES, type OrderStatus } from '@flash-sale/domain';
import type { DataSource } from 'typeorm';

export interface MySqlSaleBooks {
  stock: number;
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
  constructor(private readonly dataSource: DataSource) {}

  async read(saleId: string): Promise<MySqlSaleBooks | undefined> {
    const [sale] = (await this.dataSource.query(
      'SELECT stock, available, leased, in_doubt, redis_epoch, per_user_limit FROM sales WHERE id = ?',
      [saleId],
    )) as Record<string, number>[];
    if (!sale) return undefined;
    const holding = HOLDING_STATUSES.map(() => '?').join(', ');
    const [rows, [excess]] = await Promise.all([
      // Every order of the sale (tens of thousands after a big one): plain rows, not TypeORM entities,
      // whose hydration cost the reconciliation job more than MySQL's work did.
      this.dataSource.query('SELECT order_no, status, quantity, lease_epoch FROM orders WHERE sale_id = ?', [
        saleId,
      ]) as Promise<{ order_no: string; status: OrderStatus; quantity: number; lease_epoch: number | null }[]>,
      this.dataSource.query(
        `SELECT COALESCE(SUM(GREATEST(units - ?, 0)), 0) AS excess
           FROM (SELECT SUM(quantity) AS units FROM orders
                  WHERE sale_id = ? AND status IN (${holding}) GROUP BY user_id) AS per_user`,
        [sale['per_user_limit'], saleId, ...HOLDING_STATUSES],
      ) as Promise<{ excess: string | number }[]>,
    ]);
    return {
      stock: Number(sale['stock']),
      available: Number(sale['available']),
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

  /** Which of these order numbers MySQL has a row for now. */
  async writtenAmong(orderNos: readonly string[]): Promise<Set<string>> {
    const written = new Set<string>();
    for (let i = 0; i < orderNos.length; i += 1000) {
      const chunk = orderNos.slice(i, i + 1000);
      const rows = (await this.dataSource.query(
        `SELECT order_no FROM orders WHERE order_no IN (${chunk.map(() => '?').join(', ')})`,
        chunk,
      )) as { order_no: string }[];
      for (const row of rows) written.add(row.order_no);
    }
    return written;
  }
}
