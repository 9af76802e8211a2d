import { StockLeases } from '@flash-sale/stock';
import { SaleBuyerRepository } from '@flash-sale/db';
import { RetryLaterError, ErrorCode } from '@flash-sale/domain';
import { Injectable } from '@nestjs/common';

/** Buyers this process has marked, kept only to save a round trip: the mark itself is MySQL's. */
const REMEMBERED_BUYERS = 100_000;
/** Loads of the sale a buyer's move back to Redis may need before the fallback stops selling to them. */
const MOVE_ATTEMPTS = 3;

/**
 * Before Redis holds a submit token of a buyer — issued by Redis, or adopted into it — MySQL records
 * that Redis may sell to that buyer (docs/failure-model.md, "The Redis-down fallback"). The fallback
 * then sells only to buyers Redis never saw, so it can neither repeat a sale Redis made with the same
 * token nor miss units a buyer reserved in Redis when it counts their per-user limit.
 *
 * A buyer the fallback already sold to is moved back once Redis knows those orders: the sale is
 * loaded (which writes MySQL's orders into Redis), then the mark moves, provided no fallback order
 * arrived in between.
 */
@Injectable()
export class RedisBuyers {
  private readonly marked = new Set<string>();

  constructor(
    private readonly saleBuyers: SaleBuyerRepository,
    private readonly leases: StockLeases,
  ) {}

  async mark(saleId: string, userId: string): Promise<void> {
    const key = `${saleId}|${userId}`;
    if (this.marked.has(key)) return;
    for (let attempt = 1; ; attempt++) {
      const row = await this.saleBuyers.markRedis(saleId, userId);
      if (row.channel === 'redis') break;
      await this.leases.ensureLoadedAfterNow(saleId);
      if (await this.saleBuyers.moveToRedis(saleId, userId, row.fallbackOrders)) break;
      if (attempt === MOVE_ATTEMPTS) {
        throw new RetryLaterError(ErrorCode.Unavailable, 'Your earlier orders are still being counted; retry', 1);
      }
    }
    if (this.marked.size >= REMEMBERED_BUYERS) this.marked.clear();
    this.marked.add(key);
  }
}
