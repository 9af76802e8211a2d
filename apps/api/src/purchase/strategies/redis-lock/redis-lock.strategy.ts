import type { SaleTerms } from '@flash-sale/domain';
import { Injectable } from '@nestjs/common';
import type { PurchaseOrder } from '../../purchase-body';
import type { PurchaseAccepted, StockStrategy, StockStrategyPlugin } from '../../stock-strategy';
import { LockedPurchases } from './locked-purchases';
import { LockHolderPause } from './lock-holder-pause';
import { lockLost, PurchaseLock } from './purchase-lock';

/**
 * `redis-lock`: a per-sale lock in Redis around read, check and write in MySQL, the write fenced by the
 * grant's token (claimed on the sale's row before the read), so a holder whose lock ran out cannot land
 * it. Relative to the row, not to what was read: cancelled and expired orders give units back without
 * the lock, and none of them is lost.
 */
@Injectable()
export class RedisLockStrategy implements StockStrategy {
  constructor(
    private readonly locked: LockedPurchases,
    readonly lockHolderPauses: LockHolderPause,
  ) {}

  sell(sale: SaleTerms, userId: string, order: PurchaseOrder): Promise<PurchaseAccepted> {
    return this.locked.sell(
      sale,
      userId,
      order,
      true,
      async (statements, { order: { quantity } }, _available, grant) => {
        if (!(await statements.takeUnitsFenced(sale.id, quantity, grant.lock.token))) throw lockLost();
      },
    );
  }
}

/** The lock, its pause and the locked purchase are redis-lock-unfenced's too (it imports them from here). */
export const redisLock: StockStrategyPlugin = {
  implementation: RedisLockStrategy,
  providers: [PurchaseLock, LockHolderPause, LockedPurchases],
};
