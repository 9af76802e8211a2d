import { type AppConfig, InjectAppConfig } from '@flash-sale/config';
import { OptimisticConflict, segmentFor, StrategyPurchaseRepository, withOptimisticRetries } from '@flash-sale/db';
import { Injectable } from '@nestjs/common';
import type { StockStrategyPlugin } from '../../stock-strategy';
import { type MySqlPurchase, MySqlPurchases } from '../mysql/mysql-purchases';
import { MySqlStrategy } from '../mysql/mysql-strategy';

/**
 * `db-segmented`: optimistic per segment of the stock (seed 004's 分段). The units come from the buyer's
 * own segment (by a hash of the buyer), then the next ones, then the sale's row (units given back by
 * cancelled or expired orders). A conflict retries the whole purchase, like db-optimistic, but only
 * buyers on the same segment conflict.
 */
@Injectable()
export class DbSegmentedStrategy extends MySqlStrategy {
  constructor(
    purchases: MySqlPurchases,
    repository: StrategyPurchaseRepository,
    @InjectAppConfig() private readonly config: AppConfig,
  ) {
    super(purchases, repository);
  }

  protected takeStock(purchase: MySqlPurchase): Promise<void> {
    const { sale, order } = purchase;
    return withOptimisticRetries(
      () =>
        this.repository.inTransaction(async (statements) => {
          const segments = await statements.readSegments(sale.id);
          let available = segments.reduce((units, segment) => units + segment.available, 0);
          // The sale's row is read only when the segments cannot cover the purchase.
          const row = available < order.quantity ? await statements.readVersioned(sale.id) : undefined;
          available += row?.available ?? 0;
          await this.purchases.insertIfAllowed(statements, purchase, available);
          let needed = order.quantity;
          const first = segmentFor(order.userId, segments.length);
          for (let i = 0; i < segments.length && needed > 0; i++) {
            const segment = segments[(first + i) % segments.length]!;
            const units = Math.min(needed, segment.available);
            if (units === 0) continue;
            if (!(await statements.takeFromSegment(sale.id, segment, units))) throw new OptimisticConflict();
            needed -= units;
          }
          if (needed > 0 && !(await statements.takeUnitsAtVersion(sale.id, row!.version, needed))) {
            throw new OptimisticConflict();
          }
          await this.purchases.refuseOutsideMySqlWindow(statements, sale);
        }, 'READ COMMITTED'),
      { retries: this.config.worker.optimisticLockRetries },
    );
  }
}

export const dbSegmented: StockStrategyPlugin = { implementation: DbSegmentedStrategy };
