import { isDuplicateKeyError, type NewOrder, type PurchaseStatements } from '@flash-sale/db';
import {
  decidePurchase,
  DomainError,
  ErrorCode,
  OrderNumberGenerator,
  type PurchaseRequestFacts,
  type SaleTerms,
} from '@flash-sale/domain';
import { Injectable } from '@nestjs/common';
import { MetricsService } from '../../../metrics/metrics.service';
import type { PurchaseOrder } from '../../purchase-body';
import { refusal } from '../../refusals';
import { TokenOrders, type WrittenOrder } from '../../token-orders';

/** One synchronous purchase, its request already allowed: what a strategy's guard around the stock works on. */
export interface MySqlPurchase {
  readonly sale: SaleTerms;
  readonly request: PurchaseRequestFacts;
  readonly order: NewOrder;
}

/**
 * How a strategy takes a purchase's units and inserts its order (`MySqlPurchases.insertIfAllowed`), or
 * throws a refusal. It may instead return the order its submit token already made (a replay it found).
 */
export type TakeStock = (purchase: MySqlPurchase) => Promise<void | WrittenOrder>;

/**
 * The steps every strategy that sells straight from MySQL shares; the guard around the stock is each
 * strategy's own. The facts come from MySQL and the submit token's signature, the answer from the
 * purchase rules (libs/domain purchase-rules.ts), so the checks and errors are the Redis path's. Orders
 * remember their submit token (unique), which makes a replay return the same order.
 */
@Injectable()
export class MySqlPurchases {
  private readonly orderNumbers = new OrderNumberGenerator();

  constructor(
    private readonly tokenOrders: TokenOrders,
    private readonly metrics: MetricsService,
  ) {}

  async sell(sale: SaleTerms, userId: string, order: PurchaseOrder, takeStock: TakeStock): Promise<WrittenOrder> {
    // The window, the submit token and the replay first: they need neither the stock nor a lock.
    const { request, replay } = await this.tokenOrders.decideRequest(sale, userId, order.token);
    if (replay) return this.counted(replay);
    const purchase: MySqlPurchase = { sale, request, order: this.newOrder(sale, userId, order) };
    try {
      const replayed = await takeStock(purchase);
      if (replayed) return this.counted(replayed);
    } catch (error) {
      const limitHit = error instanceof DomainError && error.code === ErrorCode.LimitReached;
      if (!isDuplicateKeyError(error) && !limitHit) throw error;
      // The same submit token raced itself (a double click): the one that got in made the order, which
      // is the answer to every click — whether this one lost on the unique token, or saw that order
      // count against the per-user limit.
      const winner = await this.tokenOrders.orderOfToken(order.token, userId);
      if (winner) return this.counted(winner);
      if (limitHit) throw error;
      // The buyer's purchase slot was taken by a concurrent purchase of theirs with another submit token.
      throw refusal(ErrorCode.LimitReached);
    }
    // Its expiry needs nothing here (and so no Redis, which may be down in the fallback): the worker's
    // sweep expires every PENDING_PAYMENT order past its expires_at, however it was written.
    return this.counted({ orderNo: purchase.order.orderNo, status: 'PENDING_PAYMENT', made: 'written', replay: false });
  }

  /** The rules again, now with the units counted under the strategy's guard; then the insert. */
  async insertIfAllowed(statements: PurchaseStatements, purchase: MySqlPurchase, available: number): Promise<void> {
    const buyer = await statements.buyerHolding(purchase.sale.id, purchase.order.userId);
    const refused = this.refusalOf(purchase, buyer.units, available);
    if (refused) throw refused;
    await statements.insertOrders([{ ...purchase.order, userSlot: buyer.freeSlot }]);
  }

  /** The purchase rules' refusal of this purchase with these units held and left, if they refuse it. */
  refusalOf({ sale, request, order }: MySqlPurchase, unitsHeld: number, available: number): DomainError | undefined {
    const decision = decidePurchase({
      ...request,
      quantity: order.quantity,
      perUserLimit: sale.perUserLimit,
      unitsHeld,
      available,
    });
    return decision.kind === 'refuse' ? refusal(decision.code) : undefined;
  }

  /**
   * The window was checked against this process's copy of the sale, which may lag an admin's edit by a
   * few seconds, or its clock may be off: the purchase commits only inside the window MySQL records, by
   * MySQL's clock (naive-unsafe, which has no transaction to roll back, does without).
   */
  async refuseOutsideMySqlWindow(statements: PurchaseStatements, sale: SaleTerms): Promise<void> {
    const window = await statements.windowByMySql(sale.id);
    if (window === 'ended') throw refusal(ErrorCode.SaleEnded);
    if (window === 'not-started') throw refusal(ErrorCode.SaleNotStarted);
  }

  private newOrder(sale: SaleTerms, userId: string, { token, quantity }: PurchaseOrder): NewOrder {
    const now = new Date();
    return {
      orderNo: this.orderNumbers.next(sale.id),
      saleId: sale.id,
      userId,
      quantity,
      amountCents: quantity * sale.priceCents,
      submitToken: token,
      reservedAt: now,
      expiresAt: new Date(now.getTime() + sale.paymentTimeoutSeconds * 1000),
    };
  }

  private counted(written: WrittenOrder): WrittenOrder {
    this.metrics.countPurchase(written.replay ? 'replayed' : 'accepted');
    return written;
  }
}
