import { type PurchaseStatements, StrategyPurchaseRepository } from '@flash-sale/db';
import type { SaleTerms } from '@flash-sale/domain';
import { Injectable } from '@nestjs/common';
import type { PurchaseOrder } from '../../purchase-body';
import type { WrittenOrder } from '../../token-orders';
import { type MySqlPurchase, MySqlPurchases } from '../mysql/mysql-purchases';
import { LockHolderPause } from './lock-holder-pause';
import { type LockGrant, PurchaseLock } from './purchase-lock';

/** How a lock holder writes the units it took: the one thing the two redis-lock strategies do differently. */
export type LockedWrite = (
  statements: PurchaseStatements,
  purchase: MySqlPurchase,
  available: number,
  grant: LockGrant,
) => Promise<void>;

/**
 * A purchase under the sale's Redis lock (PurchaseLock): read, check and write in MySQL while holding
 * it. Read committed: a paused holder keeps no row lock that would stop the next one. The
 * demonstration's paused holder (LockHolderPause) stops between the check and the write.
 */
@Injectable()
export class LockedPurchases {
  constructor(
    private readonly purchases: MySqlPurchases,
    private readonly repository: StrategyPurchaseRepository,
    private readonly purchaseLock: PurchaseLock,
    private readonly pause: LockHolderPause,
  ) {}

  sell(
    sale: SaleTerms,
    userId: string,
    order: PurchaseOrder,
    fenced: boolean,
    write: LockedWrite,
  ): Promise<WrittenOrder> {
    return this.purchases.sell(sale, userId, order, (purchase) =>
      this.purchaseLock.holding(sale.id, fenced, (grant) =>
        this.repository.inTransaction(async (statements) => {
          const available = await statements.availableUnguarded(sale.id);
          await this.purchases.insertIfAllowed(statements, purchase, available);
          await this.pause.pauseIfArmed(grant);
          await write(statements, purchase, available, grant);
          await this.purchases.refuseOutsideMySqlWindow(statements, sale);
        }, 'READ COMMITTED'),
      ),
    );
  }
}
