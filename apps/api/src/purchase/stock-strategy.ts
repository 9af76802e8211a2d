import type { OrderStatus, SaleTerms } from '@flash-sale/domain';
import type { Provider, Type } from '@nestjs/common';
import type { PurchaseOrder } from './purchase-body';

/**
 * A purchase's success (docs/api.md "Buying"): the order and its status now — `QUEUED` for a fresh Redis
 * reservation, `PENDING_PAYMENT` for an order MySQL wrote at once, and for a replay the order as it is
 * (`PAID`, `CANCELLED`… included).
 */
export interface PurchaseAccepted {
  orderNo: string;
  status: OrderStatus;
  /** How the order was made, which the HTTP status says: reserved for the worker to write (202), or written at once (201). */
  made: 'reserved' | 'written';
  /** The token had bought before: nothing was sold now. */
  replay: boolean;
}

/**
 * How a sale sells (docs/architecture.md "Strategies"). PurchaseService has checked the caller, the body
 * and the sale, and asks the sale's strategy; every refusal is thrown (`refusal`, `retryLater`).
 */
export interface StockStrategy {
  /**
   * True when the strategy will count this purchase's rate limits itself, atomically with its own work
   * (redis-lua's reservation script); absent or false, PurchaseService spends them before `sell`. Asked
   * just before `sell`.
   */
  countsRateLimits?(): boolean;
  /** A submit token was signed for this buyer; before they have it, the strategy keeps what it needs of it. */
  tokenIssued?(sale: SaleTerms, userId: string, token: string, ttlSeconds: number): Promise<void>;
  sell(sale: SaleTerms, userId: string, order: PurchaseOrder): Promise<PurchaseAccepted>;
}

/** What a strategy's folder gives the purchase module: its implementation and the providers it needs. */
export interface StockStrategyPlugin {
  implementation: Type<StockStrategy>;
  providers?: Provider[];
}
