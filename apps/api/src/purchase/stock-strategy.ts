import type { OrderStatus, SaleTerms } from '@flash-sale/domain';
import type { Provider, Type } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
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
 * A final answer a strategy can give before the purchase path has read the sale or spent a rate limit
 * (docs/api.md's sold-out exception): asked for every purchase whose caller and body are valid, whatever
 * the sale's strategy, so it must decide for its own sales only and answer `false` for any other.
 */
export interface EarlyAnswer {
  /** True when the answer is certainly this (then `give` sends it). Synchronous on a live sale; never rejects. */
  applies(saleId: string, userId: string, order: PurchaseOrder): boolean | Promise<boolean>;
  give(reply: FastifyReply): void;
}

/** The demonstration's paused lock holder (docs/architecture.md "Strategies — the oversell demonstration"). */
export interface LockHolderPauses {
  /** The sale's next lock grant pauses past the lock's TTL; an unused arming is dropped after `forMs`. */
  arm(saleId: string, forMs: number): Promise<void>;
  disarm(saleId: string): Promise<void>;
}

/**
 * How a sale sells (docs/architecture.md "Strategies"). PurchaseService has checked the caller, the body
 * and the sale, and asks the sale's strategy; every refusal is thrown (`refusal`, `retryLater`). The
 * optional members are what a strategy adds to the shared path; the shared path names no strategy.
 */
export interface StockStrategy {
  /** An answer given before the sale is read and the rate limits are spent (the route asks every strategy's). */
  readonly earlyAnswer?: EarlyAnswer;
  /** Present for a strategy that sells under a lock the demonstration may pause (the contract's `lockHolder`). */
  readonly lockHolderPauses?: LockHolderPauses;
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
