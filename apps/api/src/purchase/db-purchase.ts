import { type AppConfig, InjectAppConfig } from '@flash-sale/config';
import {
  isDuplicateKeyError,
  OptimisticConflict,
  type OrderEntity,
  type PurchaseStatements,
  type SaleEntity,
  StrategyPurchaseRepository,
  withOptimisticRetries,
} from '@flash-sale/db';
import {
  decidePurchase,
  decidePurchaseRequest,
  DomainError,
  ErrorCode,
  OrderNumberGenerator,
  type PurchaseRequestFacts,
} from '@flash-sale/domain';
import { Injectable } from '@nestjs/common';
import { refusal } from './refusals';
import { SubmitTokens } from './submit-tokens';

/** The MySQL-only ways to sell, for comparison with redis-lua (docs/architecture.md "Strategies"). */
export type DbStrategy = 'db-optimistic' | 'db-pessimistic' | 'naive-unsafe';

export interface OrderCreated {
  orderNo: string;
  status: 'PENDING_PAYMENT';
}

/**
 * Synchronous purchases straight against MySQL: the facts come from MySQL and the submit token's
 * signature, the answer from the purchase rules (libs/domain purchase-rules.ts), so the checks and
 * errors are the Redis path's. Three flavours of guarding the stock:
 * - `db-optimistic`: read the sale's version, write conditionally on it, retry on conflict;
 * - `db-pessimistic`: `SELECT … FOR UPDATE` the sale row, then write;
 * - `naive-unsafe`: read, check, write back the value it read, with no guard. UNSAFE ON PURPOSE: two
 *   buyers that read the same `available` both succeed and one update is lost — it oversells under
 *   load, which is what the comparison exists to show.
 * Orders remember their submit token (unique), which makes a replay return the same order.
 */
@Injectable()
export class DbPurchase {
  private readonly orderNumbers = new OrderNumberGenerator();

  constructor(
    private readonly repository: StrategyPurchaseRepository,
    private readonly submitTokens: SubmitTokens,
    @InjectAppConfig() private readonly config: AppConfig,
  ) {}

  async purchase(
    sale: SaleEntity,
    userId: string,
    submitToken: string,
    quantity: number,
    strategy: DbStrategy,
  ): Promise<OrderCreated> {
    // The window, the submit token and the replay first: they need neither the stock nor a lock.
    const request = this.requestFacts(sale, userId, submitToken);
    // Looked up only once the signature holds: it names the sale, which the orders' token column does not.
    const bought = request.submitToken.issuedToBuyer
      ? await this.repository.orderOfSubmitToken(submitToken)
      : undefined;
    request.submitToken.boughtBy = bought?.userId;
    const decided = decidePurchaseRequest(request);
    if (decided?.kind === 'refuse') throw refusal(decided.code);
    if (decided?.kind === 'replay') return { orderNo: bought!.orderNo, status: 'PENDING_PAYMENT' };

    const order = this.newOrder(sale, userId, submitToken, quantity);
    try {
      if (strategy === 'db-optimistic') await this.optimistic(sale, request, order);
      else if (strategy === 'db-pessimistic') await this.pessimistic(sale, request, order);
      else await this.naiveUnsafe(sale, request, order);
    } catch (error) {
      const limitHit = error instanceof DomainError && error.code === ErrorCode.LimitReached;
      if (!isDuplicateKeyError(error) && !limitHit) throw error;
      // The same submit token raced itself (a double click): the one that got in made the order, which
      // is the answer to every click — whether this one lost on the unique token, or saw that order
      // count against the per-user limit.
      const winner = await this.orderOfToken(submitToken, userId);
      if (winner) return winner;
      if (limitHit) throw error;
      // The buyer's purchase slot was taken by a concurrent purchase of theirs with another submit token.
      throw refusal(ErrorCode.LimitReached);
    }
    // Its expiry needs nothing here (and so no Redis, which may be down in the fallback): the worker's
    // sweep expires every PENDING_PAYMENT order past its expires_at, however it was written.
    return { orderNo: order.orderNo!, status: 'PENDING_PAYMENT' };
  }

  private optimistic(sale: SaleEntity, request: PurchaseRequestFacts, order: Partial<OrderEntity>): Promise<void> {
    return withOptimisticRetries(
      () =>
        this.repository.inTransaction(async (statements) => {
          const stock = await statements.readVersioned(sale.id);
          await this.insertIfAllowed(statements, sale, request, order, stock?.available ?? 0);
          if (!(await statements.takeUnitsAtVersion(sale.id, stock!.version, order.quantity!))) {
            throw new OptimisticConflict();
          }
        }, 'READ COMMITTED'),
      { retries: this.config.worker.optimisticLockRetries },
    );
  }

  private pessimistic(sale: SaleEntity, request: PurchaseRequestFacts, order: Partial<OrderEntity>): Promise<void> {
    return this.repository.inTransaction(async (statements) => {
      const available = await statements.availableForUpdate(sale.id);
      await this.insertIfAllowed(statements, sale, request, order, available);
      await statements.takeUnitsLocked(sale.id, order.quantity!);
    });
  }

  private naiveUnsafe(sale: SaleEntity, request: PurchaseRequestFacts, order: Partial<OrderEntity>): Promise<void> {
    return this.repository.withoutTransaction(async (statements) => {
      const available = await statements.availableUnguarded(sale.id);
      await this.insertIfAllowed(statements, sale, request, order, available);
      // Writes back what it read minus its own units: a concurrent buyer's update is silently lost.
      await statements.overwriteAvailable(sale.id, available - order.quantity!);
    });
  }

  /** The rules again, now with the units counted under the strategy's guard; then the insert. */
  private async insertIfAllowed(
    statements: PurchaseStatements,
    sale: SaleEntity,
    request: PurchaseRequestFacts,
    order: Partial<OrderEntity>,
    available: number,
  ): Promise<void> {
    const buyer = await statements.buyerHolding(sale.id, order.userId!);
    const decision = decidePurchase({
      ...request,
      quantity: order.quantity!,
      perUserLimit: sale.perUserLimit,
      unitsHeld: buyer.units,
      available,
    });
    if (decision.kind === 'refuse') throw refusal(decision.code);
    await statements.insertOrder({ ...order, userSlot: buyer.freeSlot });
  }

  private newOrder(sale: SaleEntity, userId: string, submitToken: string, quantity: number): Partial<OrderEntity> {
    const now = new Date();
    return {
      orderNo: this.orderNumbers.next(sale.id),
      saleId: sale.id,
      userId,
      quantity,
      amountCents: quantity * sale.priceCents,
      status: 'PENDING_PAYMENT',
      failureReason: null,
      submitToken,
      reservedAt: now,
      expiresAt: new Date(now.getTime() + sale.paymentTimeoutSeconds * 1000),
    };
  }

  /** The rules' window and submit-token checks, without MySQL (the Redis-down fallback asks them first). */
  checkWindowAndToken(sale: SaleEntity, userId: string, submitToken: string): void {
    const decided = decidePurchaseRequest(this.requestFacts(sale, userId, submitToken));
    if (decided?.kind === 'refuse') throw refusal(decided.code);
  }

  /** The order a submit token made, if MySQL has it (written by any path); another user's → 403. */
  async orderOfToken(submitToken: string, userId: string): Promise<OrderCreated | undefined> {
    const order = await this.repository.orderOfSubmitToken(submitToken);
    if (!order) return undefined;
    if (order.userId !== userId) throw refusal(ErrorCode.TokenInvalid);
    return { orderNo: order.orderNo, status: 'PENDING_PAYMENT' };
  }

  private requestFacts(sale: SaleEntity, userId: string, submitToken: string): PurchaseRequestFacts {
    const nowMs = Date.now();
    return {
      userId,
      nowMs,
      startsAtMs: sale.startsAt.getTime(),
      endsAtMs: sale.endsAt.getTime(),
      submitToken: { issuedToBuyer: this.submitTokens.verify(submitToken, sale.id, userId, nowMs) },
    };
  }
}
