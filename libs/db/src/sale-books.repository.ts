import { type BookedOrder, HOLDING_STATUSES } from '@flash-sale/domain';
import type { DataSource } from 'typeorm';
import { OrderEntity } from './entities/order.entity';

export interface MySqlSaleBooks {
  stock: number;
  available: number;
  rows: BookedOrder[];
  /** Units any single buyer holds above the per-user limit, summed over buyers. */
  unitsAboveUserLimit: number;
}

/** What MySQL says about one sale, for the audit and the reconciliation job. */
export class SaleBooksRepository {
  constructor(private readonly dataSource: DataSource) {}

  async read(saleId: string): Promise<MySqlSaleBooks | undefined> {
    const [sale] = (await this.dataSource.query('SELECT stock, available, per_user_limit FROM sales WHERE id = ?', [
      saleId,
    ])) as { stock: number; available: number; per_user_limit: number }[];
    if (!sale) return undefined;
    const holding = HOLDING_STATUSES.map(() => '?').join(', ');
    const [rows, [excess]] = await Promise.all([
      this.dataSource.getRepository(OrderEntity).find({
        select: { orderNo: true, status: true, quantity: true },
        where: { saleId },
      }),
      this.dataSource.query(
        `SELECT COALESCE(SUM(GREATEST(units - ?, 0)), 0) AS excess
           FROM (SELECT SUM(quantity) AS units FROM orders
                  WHERE sale_id = ? AND status IN (${holding}) GROUP BY user_id) AS per_user`,
        [sale.per_user_limit, saleId, ...HOLDING_STATUSES],
      ) as Promise<{ excess: string | number }[]>,
    ]);
    return {
      stock: Number(sale.stock),
      available: Number(sale.available),
      rows: rows.map(({ orderNo, status, quantity }) => ({ orderNo, status, quantity })),
      unitsAboveUserLimit: Number(excess?.excess ?? 0),
    };
  }
}
