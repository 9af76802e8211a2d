import { type AppConfig, InjectAppConfig } from '@flash-sale/config';
import {
  OptimisticConflict,
  type PurchaseStatements,
  StrategyPurchaseRepository,
  withOptimisticRetries,
} from '@flash-sale/db';
import { Injectable } from '@nestjs/common';
import type { StockStrategyPlugin } from '../../stock-strategy';
import { type MySqlPurchase, MySqlPurchases } from '../mysql/mysql-purchases';
import { MySqlStrategy } from '../mysql/mysql-strategy';

/**
 * `db-optimistic`: read the sale's version, write conditionally on it, retry the whole purchase on a
 * conflict (seed 004's optimistic lock). Also how a redis-lua sale sells while Redis is down.
 */
@Injectable()
export class DbOptimisticStrategy extends MySqlStrategy {
  constructor(
    purchases: MySqlPurchases,
    repository: StrategyPurchaseRepository,
    @InjectAppConfig() private readonly config: AppConfig,
  ) {
    super(purchases, repository);
  }

  /** `first`: run first in every attempt's transaction; it may refuse the purchase (the Redis-down fallback's claim). */
  takeStock(purchase: MySqlPurchase, first?: (statements: PurchaseStatements) => Promise<void>): Promise<void> {
    const { sale, order } = purchase;
    return withOptimisticRetries(
      () =>
        this.repository.inTransaction(async (statements) => {
          await first?.(statements);
          const stock = await statements.readVersioned(sale.id);
          await this.purchases.insertIfAllowed(statements, purchase, stock?.available ?? 0);
          if (!(await statements.takeUnitsAtVersion(sale.id, stock!.version, order.quantity))) {
            throw new OptimisticConflict();
          }
          await this.purchases.refuseOutsideMySqlWindow(statements, sale);
        }, 'READ COMMITTED'),
      { retries: this.config.worker.optimisticLockRetries },
    );
  }
}

export const dbOptimistic: StockStrategyPlugin = { implementation: DbOptimisticStrategy };
