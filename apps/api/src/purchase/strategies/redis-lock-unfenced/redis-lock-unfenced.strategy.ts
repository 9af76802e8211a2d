import type { SaleTerms } from '@flash-sale/domain';
import { Injectable } from '@nestjs/common';
import type { PurchaseOrder } from '../../purchase-body';
import type { PurchaseAccepted, StockStrategy, StockStrategyPlugin } from '../../stock-strategy';
import { LockedPurchases } from '../redis-lock/locked-purchases';
import { LockHolderPause } from '../redis-lock/lock-holder-pause';

/**
 * `redis-lock-unfenced`: redis-lock's lock, trusted to keep everyone else out. UNSAFE ON PURPOSE: right
 * while the lock holds; a holder paused past the TTL writes the count it read over its successor's
 * sales, and the units they sold are sold again.
 */
@Injectable()
export class RedisLockUnfencedStrategy implements StockStrategy {
  constructor(
    private readonly locked: LockedPurchases,
    readonly lockHolderPauses: LockHolderPause,
  ) {}

  sell(sale: SaleTerms, userId: string, order: PurchaseOrder): Promise<PurchaseAccepted> {
    return this.locked.sell(sale, userId, order, false, (statements, { order: { quantity } }, available) =>
      statements.overwriteAvailable(sale.id, available - quantity),
    );
  }
}

export const redisLockUnfenced: StockStrategyPlugin = { implementation: RedisLockUnfencedStrategy };
