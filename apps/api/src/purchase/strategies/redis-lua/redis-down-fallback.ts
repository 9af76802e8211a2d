import { type AppConfig, InjectAppConfig } from '@flash-sale/config';
import { DomainError, ErrorCode, type SaleTerms } from '@flash-sale/domain';
import { StockLeases } from '@flash-sale/stock';
import { RedisConnection } from '@flash-sale/redis';
import { Injectable } from '@nestjs/common';
import { isDependencyDown } from '../../../common/error-body';
import type { PurchaseOrder } from '../../purchase-body';
import { retryLater } from '../../refusals';
import type { WrittenOrder } from '../../token-orders';
import { DbOptimisticStrategy } from '../db-optimistic/db-optimistic.strategy';
import { MySqlPurchases } from '../mysql/mysql-purchases';

/**
 * A redis-lua sale while Redis cannot be reached and REDIS_FALLBACK is on (docs/failure-model.md): it
 * keeps selling correctly, only slower, as db-optimistic on the units MySQL has not leased. MySQL sells
 * only to a buyer Redis never sold to (RedisBuyers): a buyer marked for Redis may hold a reservation
 * there that MySQL has not seen, or a token Redis may have consumed a moment before it went down. They
 * are asked to retry once Redis is back, when the same token gets its true answer. A token MySQL already
 * made an order with replays that order. Once Redis answers again, a sale this process sold here is
 * refreshed in Redis (with what the fallback sold, and its tokens) before Redis sells anything, so no
 * unit and no token is used twice.
 */
@Injectable()
export class RedisDownFallback {
  /** Sales this process sold through the fallback: refresh them in Redis before Redis sells again. */
  private readonly reloadAfterFallback = new Set<string>();

  constructor(
    private readonly purchases: MySqlPurchases,
    private readonly optimistic: DbOptimisticStrategy,
    private readonly leases: StockLeases,
    private readonly redis: RedisConnection,
    @InjectAppConfig() private readonly config: AppConfig,
  ) {}

  /** Whether a redis-lua purchase goes to MySQL now, without trying Redis first. */
  takesOver(): boolean {
    return this.config.purchase.redisFallback && !this.redis.isReady;
  }

  /** Whether a reservation that failed with `error` is this fallback's to sell instead. */
  takesOverAfter(error: unknown): boolean {
    return this.config.purchase.redisFallback && isDependencyDown(error) && !this.redis.isReady;
  }

  /**
   * Before Redis sells a sale again: reloads it if this process sold it through the fallback (the
   * promise to wait for), else nothing to wait for.
   */
  beforeRedisSells(saleId: string): Promise<unknown> | undefined {
    return this.reloadAfterFallback.delete(saleId) ? this.leases.ensureLoaded(saleId) : undefined;
  }

  async sell(sale: SaleTerms, userId: string, order: PurchaseOrder): Promise<WrittenOrder> {
    try {
      return await this.purchases.sell(sale, userId, order, (purchase) => {
        this.reloadAfterFallback.add(sale.id);
        return this.optimistic.takeStock(purchase, async (statements) => {
          if (!(await statements.claimBuyerForFallback(sale.id, userId))) {
            // Redis may hold a reservation of this buyer's (or sell with this token) that MySQL has not
            // seen: selling here could break their per-user limit or sell one token twice.
            throw retryLater('Purchases are paused for a moment; retry with the same token');
          }
        });
      });
    } catch (error) {
      // MySQL's own units are gone, but Redis may still hold leased ones: not sold out, not yet.
      const soldOut = error instanceof DomainError && error.code === ErrorCode.SoldOut;
      if (soldOut && (await this.leases.unitsOutsideMySql(sale.id)).leased > 0) {
        throw retryLater('The last units are with a service that is down; retry with the same token');
      }
      throw error;
    }
  }
}
