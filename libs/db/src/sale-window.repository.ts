import type { DataSource } from 'typeorm';

/** Which sales are open when: for the jobs that must look at every sale in its window, marked active or not. */
export class SaleWindowRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** The ids of the Redis-backed (`redis-lua`) sales that start by `to` and end after `from`. */
  async redisBackedSalesOpenBetween(from: Date, to: Date): Promise<string[]> {
    const rows = (await this.dataSource.query(
      `SELECT id FROM sales WHERE strategy = 'redis-lua' AND starts_at <= ? AND ends_at > ?`,
      [to, from],
    )) as { id: string | number }[];
    return rows.map((row) => String(row.id));
  }
}
