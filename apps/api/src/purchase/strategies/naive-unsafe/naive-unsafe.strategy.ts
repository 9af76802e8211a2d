import { Injectable } from '@nestjs/common';
import type { StockStrategyPlugin } from '../../stock-strategy';
import { type MySqlPurchase } from '../mysql/mysql-purchases';
import { MySqlStrategy } from '../mysql/mysql-strategy';

/**
 * `naive-unsafe`: read, check, write back the value it read, with no guard. UNSAFE ON PURPOSE: two
 * buyers that read the same `available` both succeed and one update is lost — it oversells under load,
 * which is what the comparison exists to show.
 */
@Injectable()
export class NaiveUnsafeStrategy extends MySqlStrategy {
  protected takeStock(purchase: MySqlPurchase): Promise<void> {
    const { sale, order } = purchase;
    return this.repository.withoutTransaction(async (statements) => {
      const available = await statements.availableUnguarded(sale.id);
      await this.purchases.insertIfAllowed(statements, purchase, available);
      // Writes back what it read minus its own units: a concurrent buyer's update is silently lost.
      await statements.overwriteAvailable(sale.id, available - order.quantity);
    });
  }
}

export const naiveUnsafe: StockStrategyPlugin = { implementation: NaiveUnsafeStrategy };
