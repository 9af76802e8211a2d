import type { DataSource, EntityManager } from 'typeorm';

/** Which store may sell to a buyer of a Redis-backed sale (see the `sale_buyers` migration). */
export type BuyerChannel = 'redis' | 'mysql';

export interface SaleBuyerRow {
  channel: BuyerChannel;
  /** Orders the Redis-down fallback made for this buyer while they were marked `mysql`. */
  fallbackOrders: number;
}

/**
 * The `sale_buyers` table: MySQL's record of which buyers Redis may have sold to. It is what lets the
 * Redis-down fallback sell without ever repeating a sale Redis made (docs/failure-model.md).
 */
export class SaleBuyerRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Marks the buyer as one Redis may sell to, unless the fallback already sold to them: then the row
   * stays `mysql` and the caller must load those orders into Redis before `moveToRedis`.
   */
  async markRedis(saleId: string, userId: string): Promise<SaleBuyerRow> {
    await this.dataSource.query(
      "INSERT INTO sale_buyers (sale_id, user_id, channel) VALUES (?, ?, 'redis') ON DUPLICATE KEY UPDATE sale_id = sale_id",
      [saleId, userId],
    );
    return (await this.read(this.dataSource.manager, saleId, userId))!;
  }

  /**
   * Moves a `mysql` buyer to Redis, provided the fallback made no order for them since the caller saw
   * `fallbackOrdersSeen` (and loaded those into Redis). False: look again.
   */
  async moveToRedis(saleId: string, userId: string, fallbackOrdersSeen: number): Promise<boolean> {
    const result = (await this.dataSource.query(
      "UPDATE sale_buyers SET channel = 'redis' WHERE sale_id = ? AND user_id = ? AND channel = 'mysql' AND fallback_orders = ?",
      [saleId, userId, fallbackOrdersSeen],
    )) as { affectedRows: number };
    return result.affectedRows === 1;
  }

  /**
   * Every buyer MySQL holds an order of in the sale (any status, made by any path), or undefined when
   * there are more than `max`. Redis's copy can lack some of them — the fallback's orders until a load
   * writes them in, the orders the worker wrote from a copy that was lost after (a lagging replica
   * promoted) — so only MySQL can say that such a buyer's token has an order to replay.
   */
  async buyersWithOrders(saleId: string, max: number): Promise<string[] | undefined> {
    const rows = (await this.dataSource.query('SELECT DISTINCT user_id FROM orders WHERE sale_id = ? LIMIT ?', [
      saleId,
      max + 1,
    ])) as { user_id: string }[];
    return rows.length > max ? undefined : rows.map((row) => row.user_id);
  }

  /**
   * In the fallback's purchase transaction: marks the buyer `mysql` and counts the order, holding the
   * row locked until commit. False when the buyer is marked `redis`: Redis may hold a reservation of
   * theirs that MySQL has not seen (or may sell with their token), so MySQL must not sell to them now.
   */
  async claimForFallback(manager: EntityManager, saleId: string, userId: string): Promise<boolean> {
    await manager.query(
      `INSERT INTO sale_buyers (sale_id, user_id, channel, fallback_orders) VALUES (?, ?, 'mysql', 1)
       ON DUPLICATE KEY UPDATE fallback_orders = fallback_orders + IF(channel = 'mysql', 1, 0)`,
      [saleId, userId],
    );
    return (await this.read(manager, saleId, userId))?.channel === 'mysql';
  }

  private async read(manager: EntityManager, saleId: string, userId: string): Promise<SaleBuyerRow | undefined> {
    const [row] = (await manager.query(
      'SELECT channel, fallback_orders FROM sale_buyers WHERE sale_id = ? AND user_id = ?',
      [saleId, userId],
    )) as { channel: BuyerChannel; fallback_orders: number }[];
    return row && { channel: row.channel, fallbackOrders: Number(row.fallback_orders) };
  }
}
