import { StrategyPurchaseRepository } from '@flash-sale/db';
import type { SaleTerms } from '@flash-sale/domain';
import { Injectable } from '@nestjs/common';
import type { PurchaseOrder } from '../../purchase-body';
import type { PurchaseAccepted, StockStrategy } from '../../stock-strategy';
import type { WrittenOrder } from '../../token-orders';
import { type MySqlPurchase, MySqlPurchases } from './mysql-purchases';

/**
 * A strategy that sells straight from MySQL: the shared steps (MySqlPurchases) around its own guard of
 * the stock, `takeStock`. Its purchases spend their rate limits before they reach it.
 */
@Injectable()
export abstract class MySqlStrategy implements StockStrategy {
  constructor(
    protected readonly purchases: MySqlPurchases,
    protected readonly repository: StrategyPurchaseRepository,
  ) {}

  sell(sale: SaleTerms, userId: string, order: PurchaseOrder): Promise<PurchaseAccepted> {
    return this.purchases.sell(sale, userId, order, (purchase) => this.takeStock(purchase));
  }

  /** Takes the purchase's units and inserts its order under the strategy's guard, or throws a refusal. */
  protected abstract takeStock(purchase: MySqlPurchase): Promise<void | WrittenOrder>;
}
