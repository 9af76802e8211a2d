import { Injectable } from '@nestjs/common';
import type { StockStrategyPlugin } from '../../stock-strategy';
import { type MySqlPurchase } from '../mysql/mysql-purchases';
import { MySqlStrategy } from '../mysql/mysql-strategy';

/** `db-pessimistic`: `SELECT … FOR UPDATE` the sale's row, then write. Correct, but buyers wait in line. */
@Injectable()
export class DbPessimisticStrategy extends MySqlStrategy {
  protected takeStock(purchase: MySqlPurchase): Promise<void> {
    const { sale, order } = purchase;
    return this.repository.inTransaction(async (statements) => {
      const available = await statements.availableForUpdate(sale.id);
      await this.purchases.insertIfAllowed(statements, purchase, available);
      await statements.takeUnitsLocked(sale.id, order.quantity);
      await this.purchases.refuseOutsideMySqlWindow(statements, sale);
    });
  }
}

export const dbPessimistic: StockStrategyPlugin = { implementation: DbPessimisticStrategy };
