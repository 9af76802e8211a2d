import type { SaleLayout } from '@flash-sale/domain';
import type { DataSource, EntityManager } from 'typeorm';

/** The one purpose whose sales may be removed: those an API process's startup warm-up creates. */
const WARM_UP_PURPOSE = 'warm-up';

/**
 * The startup warm-up's sales (purpose `warm-up`): a real sale the warm-up buys in through the front
 * door, then removes with every row it made. Nothing else is ever removed: sales are MySQL's record of
 * what was sold, and a sale of any other purpose is refused here.
 */
export class WarmUpSaleRepository {
  /** The tables that keep rows per sale (a `sale_id` column), read once: every one is cleared. */
  private tablesOfSales?: Promise<string[]>;

  constructor(private readonly dataSource: DataSource) {}

  /** Warm-up sales whose end has passed: left by a process that died during its warm-up. */
  async endedBefore(now: Date): Promise<SaleLayout[]> {
    const rows = (await this.dataSource.query(
      'SELECT id, buckets FROM sales WHERE purpose = ? AND ends_at <= ? ORDER BY id LIMIT 100',
      [WARM_UP_PURPOSE, now],
    )) as { id: string | number; buckets: number }[];
    return rows.map((row) => ({ id: String(row.id), buckets: Number(row.buckets) }));
  }

  /**
   * Removes the warm-up sale, its orders and their payments, and every other row of it, in one
   * transaction; false when it is gone already. The sale's row is locked first: a worker writing its
   * orders commits before (its rows are removed here) or finds the sale gone after.
   */
  async remove(saleId: string): Promise<boolean> {
    const tables = await this.tables();
    return this.dataSource.transaction('READ COMMITTED', async (manager) => {
      const [sale] = (await manager.query('SELECT purpose FROM sales WHERE id = ? FOR UPDATE', [saleId])) as {
        purpose: string;
      }[];
      if (!sale) return false;
      if (sale.purpose !== WARM_UP_PURPOSE) throw new Error(`Sale ${saleId} is not a warm-up sale: not removed`);
      await removePayments(manager, saleId);
      for (const table of tables) await manager.query(`DELETE FROM \`${table}\` WHERE sale_id = ?`, [saleId]);
      await manager.query('DELETE FROM sales WHERE id = ?', [saleId]);
      return true;
    });
  }

  private tables(): Promise<string[]> {
    this.tablesOfSales ??= this.dataSource
      .query(
        `SELECT TABLE_NAME AS name FROM information_schema.COLUMNS
          WHERE TABLE_SCHEMA = DATABASE() AND COLUMN_NAME = 'sale_id' ORDER BY TABLE_NAME`,
      )
      .then((rows: { name: string }[]) => rows.map((row) => row.name));
    return this.tablesOfSales;
  }
}

/** Payments name their order, not its sale. */
async function removePayments(manager: EntityManager, saleId: string): Promise<void> {
  await manager.query(
    'DELETE payments FROM payments JOIN orders ON orders.order_no = payments.order_no WHERE orders.sale_id = ?',
    [saleId],
  );
}
