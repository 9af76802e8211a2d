import type { RedisClient } from './redis-client';
import type { KeyBuilder } from './sale-keys';

/**
 * The index of recently active sales, so background work scales with activity rather than with the
 * number of sales: whoever changes a sale (a purchase's nudge, an order written, paid, expired) marks
 * it, and the periodic jobs visit only what was marked since their window began.
 */
export class SaleActivity {
  constructor(
    private readonly client: RedisClient,
    private readonly keys: KeyBuilder,
  ) {}

  /** Marks the sales as active at `atMs` (one ZADD; a later mark wins). */
  async touch(saleIds: Iterable<string>, atMs = Date.now()): Promise<void> {
    const args: (string | number)[] = [];
    for (const saleId of new Set(saleIds)) args.push(atMs, saleId);
    if (args.length === 0) return;
    await this.client.zadd(this.keys.activeSales, 'GT', ...args);
  }

  /** Sales marked at or after `sinceMs`. */
  async activeSince(sinceMs: number): Promise<string[]> {
    return this.client.zrangebyscore(this.keys.activeSales, sinceMs, '+inf');
  }

  /** Drops the sale's mark (a removed sale: no periodic job is to visit it again). */
  async forget(saleId: string): Promise<void> {
    await this.client.zrem(this.keys.activeSales, saleId);
  }

  /** Drops marks older than `beforeMs` (the index stays as small as the recent activity). */
  async forgetBefore(beforeMs: number): Promise<number> {
    return this.client.zremrangebyscore(this.keys.activeSales, '-inf', `(${beforeMs}`);
  }
}
