import { type AppConfig, InjectAppConfig } from '@flash-sale/config';
import {
  isDuplicateKeyError,
  OptimisticConflict,
  type OrderEntity,
  type PurchaseStatements,
  segmentFor,
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
  RetryLaterError,
  type SaleStrategy,
  type SaleTerms,
} from '@flash-sale/domain';
import { Injectable } from '@nestjs/common';
import { LockHolderPause } from './lock-holder-pause';
import { type LockGrant, lockLost, PurchaseLock } from './purchase-lock';
import { refusal } from './refusals';
import { SubmitTokens } from './submit-tokens';

/** The synchronous ways to sell, for comparison with redis-lua (docs/architecture.md "Strategies"). */
export type DbStrategy = Exclude<SaleStrategy, 'redis-lua'>;

export interface OrderCreated {
  orderNo: string;
  status: 'PENDING_PAYMENT';
}

/**
 * Synchronous purchases straight against MySQL: the facts come from MySQL and the submit token's
 * signature, the answer from the purchase rules (libs/domain purchase-rules.ts), so the checks and
 * errors are the Redis path's. The ways of guarding the stock:
 * - `db-optimistic`: read the sale's version, write conditionally on it, retry on conflict;
 * - `db-segmented`: the same per segment row of the stock, starting at the buyer's own segment;
 * - `db-pessimistic`: `SELECT … FOR UPDATE` the sale row, then write;
 * - `redis-lock`: a per-sale lock in Redis around read, check and write, the write fenced by the
 *   grant's token so a holder whose lock ran out cannot land it;
 * - `redis-lock-unfenced`: the same lock, trusted: UNSAFE ON PURPOSE, a holder paused past the lock's
 *   TTL writes over its successor's work;
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
    private readonly purchaseLock: PurchaseLock,
    private readonly pause: LockHolderPause,
    @InjectAppConfig() private readonly config: AppConfig,
  ) {}

  async purchase(
    sale: SaleTerms,
    userId: string,
    submitToken: string,
    quantity: number,
    strategy: DbStrategy,
    /** A Redis-backed sale selling through the fallback: only to a buyer Redis never sold to. */
    forRedisBuyersFallback = false,
  ): Promise<OrderCreated> {
    // The window, the submit token and the replay first: they need neither the stock nor a lock.
    const { request, replay } = await this.decideRequest(sale, userId, submitToken);
    if (replay) return replay;

    const order = this.newOrder(sale, userId, submitToken, quantity);
    try {
      await this.takeStock(strategy, sale, request, order, forRedisBuyersFallback);
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

  private takeStock(
    strategy: DbStrategy,
    sale: SaleTerms,
    request: PurchaseRequestFacts,
    order: Partial<OrderEntity>,
    forRedisBuyersFallback: boolean,
  ): Promise<void> {
    switch (strategy) {
      case 'db-optimistic':
        return this.optimistic(sale, request, order, forRedisBuyersFallback);
      case 'db-segmented':
        return this.segmented(sale, request, order);
      case 'db-pessimistic':
        return this.pessimistic(sale, request, order);
      case 'redis-lock':
        return this.purchaseLock.holding(sale.id, true, (grant) => this.fenced(grant, sale, request, order));
      case 'redis-lock-unfenced':
        return this.purchaseLock.holding(sale.id, false, (grant) => this.trustingTheLock(grant, sale, request, order));
      case 'naive-unsafe':
        return this.naiveUnsafe(sale, request, order);
    }
  }

  private optimistic(
    sale: SaleTerms,
    request: PurchaseRequestFacts,
    order: Partial<OrderEntity>,
    forRedisBuyersFallback = false,
  ): Promise<void> {
    return withOptimisticRetries(
      () =>
        this.repository.inTransaction(async (statements) => {
          if (forRedisBuyersFallback && !(await statements.claimBuyerForFallback(sale.id, order.userId!))) {
            // Redis may hold a reservation of this buyer's (or sell with this token) that MySQL has not
            // seen: selling here could break their per-user limit or sell one token twice.
            throw new RetryLaterError(
              ErrorCode.Unavailable,
              'Purchases are paused for a moment; retry with the same token',
              1,
            );
          }
          const stock = await statements.readVersioned(sale.id);
          await this.insertIfAllowed(statements, sale, request, order, stock?.available ?? 0);
          if (!(await statements.takeUnitsAtVersion(sale.id, stock!.version, order.quantity!))) {
            throw new OptimisticConflict();
          }
          await this.refuseOutsideMySqlWindow(statements, sale);
        }, 'READ COMMITTED'),
      { retries: this.config.worker.optimisticLockRetries },
    );
  }

  /**
   * Optimistic per segment: the units come from the buyer's own segment (by a hash of the buyer), then
   * the next ones, then the sale's row (units given back by cancelled or expired orders). A conflict
   * retries the whole purchase, like db-optimistic, but only buyers on the same segment conflict.
   */
  private segmented(sale: SaleTerms, request: PurchaseRequestFacts, order: Partial<OrderEntity>): Promise<void> {
    return withOptimisticRetries(
      () =>
        this.repository.inTransaction(async (statements) => {
          const segments = await statements.readSegments(sale.id);
          let available = segments.reduce((units, segment) => units + segment.available, 0);
          // The sale's row is read only when the segments cannot cover the purchase.
          const row = available < order.quantity! ? await statements.readVersioned(sale.id) : undefined;
          available += row?.available ?? 0;
          await this.insertIfAllowed(statements, sale, request, order, available);
          let needed = order.quantity!;
          const first = segmentFor(order.userId!, segments.length);
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
          await this.refuseOutsideMySqlWindow(statements, sale);
        }, 'READ COMMITTED'),
      { retries: this.config.worker.optimisticLockRetries },
    );
  }

  private pessimistic(sale: SaleTerms, request: PurchaseRequestFacts, order: Partial<OrderEntity>): Promise<void> {
    return this.repository.inTransaction(async (statements) => {
      const available = await statements.availableForUpdate(sale.id);
      await this.insertIfAllowed(statements, sale, request, order, available);
      await statements.takeUnitsLocked(sale.id, order.quantity!);
      await this.refuseOutsideMySqlWindow(statements, sale);
    });
  }

  private naiveUnsafe(sale: SaleTerms, request: PurchaseRequestFacts, order: Partial<OrderEntity>): Promise<void> {
    return this.repository.withoutTransaction(async (statements) => {
      const available = await statements.availableUnguarded(sale.id);
      await this.insertIfAllowed(statements, sale, request, order, available);
      // Writes back what it read minus its own units: a concurrent buyer's update is silently lost.
      await statements.overwriteAvailable(sale.id, available - order.quantity!);
    });
  }

  /**
   * Under the lock, with the grant's token already claimed on the sale's row (PurchaseLock): read,
   * check, write — the write lands only if no newer holder claimed the row meanwhile. Read committed:
   * a paused holder keeps no lock that would stop the next one.
   */
  private fenced(grant: LockGrant, sale: SaleTerms, request: PurchaseRequestFacts, order: Partial<OrderEntity>) {
    return this.readCheckWriteUnderLock(grant, sale, request, order, async (statements) => {
      if (!(await statements.takeUnitsFenced(sale.id, order.quantity!, grant.lock.token))) throw lockLost();
    });
  }

  /**
   * UNSAFE ON PURPOSE (redis-lock-unfenced): read, check and write back what it read, trusting the lock
   * to keep everyone else out. Right while the lock holds; a holder paused past the TTL writes its stale
   * count over its successor's sales, and the units they sold are sold again.
   */
  private trustingTheLock(
    grant: LockGrant,
    sale: SaleTerms,
    request: PurchaseRequestFacts,
    order: Partial<OrderEntity>,
  ) {
    return this.readCheckWriteUnderLock(grant, sale, request, order, (statements, available) =>
      statements.overwriteAvailable(sale.id, available - order.quantity!),
    );
  }

  /** The two redis-lock flavours differ only in their write: the read, the check and the pause are one. */
  private readCheckWriteUnderLock(
    grant: LockGrant,
    sale: SaleTerms,
    request: PurchaseRequestFacts,
    order: Partial<OrderEntity>,
    write: (statements: PurchaseStatements, available: number) => Promise<void>,
  ): Promise<void> {
    return this.repository.inTransaction(async (statements) => {
      const available = await statements.availableUnguarded(sale.id);
      await this.insertIfAllowed(statements, sale, request, order, available);
      await this.pause.pauseIfArmed(grant);
      await write(statements, available);
      await this.refuseOutsideMySqlWindow(statements, sale);
    }, 'READ COMMITTED');
  }

  /**
   * The window was checked against this process's copy of the sale, which may lag an admin's edit by a
   * few seconds, or its clock may be off: the purchase commits only inside the window MySQL records, by
   * MySQL's clock (naive-unsafe, which has no transaction to roll back, does without).
   */
  private async refuseOutsideMySqlWindow(statements: PurchaseStatements, sale: SaleTerms): Promise<void> {
    const window = await statements.windowByMySql(sale.id);
    if (window === 'ended') throw refusal(ErrorCode.SaleEnded);
    if (window === 'not-started') throw refusal(ErrorCode.SaleNotStarted);
  }

  /** The rules again, now with the units counted under the strategy's guard; then the insert. */
  private async insertIfAllowed(
    statements: PurchaseStatements,
    sale: SaleTerms,
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

  private newOrder(sale: SaleTerms, userId: string, submitToken: string, quantity: number): Partial<OrderEntity> {
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

  /**
   * The purchase rules' window, submit token and replay, asked of MySQL: the order a token made answers
   * it (a replay), expired or not, as in Redis; an unbought token must be unexpired. Throws a refusal.
   */
  async decideRequest(
    sale: SaleTerms,
    userId: string,
    submitToken: string,
  ): Promise<{ request: PurchaseRequestFacts; replay?: OrderCreated }> {
    const request = this.requestFacts(sale, userId, submitToken);
    // Looked up only once the signature holds: it names the sale, which the orders' token column does not.
    const bought = this.submitTokens.signedFor(submitToken, sale.id, userId)
      ? await this.repository.orderOfSubmitToken(submitToken)
      : undefined;
    request.submitToken.boughtBy = bought?.userId;
    const decided = decidePurchaseRequest(request);
    if (decided?.kind === 'refuse') throw refusal(decided.code);
    return {
      request,
      replay: decided?.kind === 'replay' ? { orderNo: bought!.orderNo, status: 'PENDING_PAYMENT' } : undefined,
    };
  }

  /** The order a submit token made, if MySQL has it (written by any path); another user's → 403. */
  async orderOfToken(submitToken: string, userId: string): Promise<OrderCreated | undefined> {
    const order = await this.repository.orderOfSubmitToken(submitToken);
    if (!order) return undefined;
    if (order.userId !== userId) throw refusal(ErrorCode.TokenInvalid);
    return { orderNo: order.orderNo, status: 'PENDING_PAYMENT' };
  }

  private requestFacts(sale: SaleTerms, userId: string, submitToken: string): PurchaseRequestFacts {
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
