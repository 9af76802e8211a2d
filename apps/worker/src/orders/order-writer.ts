import { type AppConfig, InjectAppConfig } from '@flash-sale/config';
import {
  isDuplicateKeyError,
  type NewOrderRow,
  OptimisticConflict,
  OrderWritingRepository,
  type OrderWritingTransaction,
  type SaleStockRow,
  withOptimisticRetries,
  SaleLayouts,
} from '@flash-sale/db';
import {
  failedOrderMove,
  type HandedOffOrder,
  type OrderStatus,
  RETURNED_STATUSES,
  StockTake,
  unitSource,
} from '@flash-sale/domain';
import { buyerBucket, type ReleaseResult, ReservationScripts } from '@flash-sale/redis';
import { Injectable, Logger } from '@nestjs/common';

/**
 * `sale-removed`: the sale no longer exists in MySQL (a startup warm-up's sale, removed with its keys
 * while this batch was in hand): nothing to write, nothing to free.
 */
export type WriteOutcome = 'created' | 'already-exists' | 'rejected' | 'sale-removed';

export const FAILURE_REASONS = {
  soldOutInMySql: 'MYSQL_STOCK_EXHAUSTED',
  duplicateSlot: 'DUPLICATE_PURCHASE_SLOT',
  duplicateToken: 'DUPLICATE_SUBMIT_TOKEN',
} as const;

interface Decision {
  order: HandedOffOrder;
  outcome: WriteOutcome;
}

/**
 * Writes orders to MySQL (docs/architecture.md "The purchase path", step 4), many per transaction. In one
 * transaction it inserts the rows, then takes their units off the sale's hot row with the optimistic lock,
 * last, so the row lock lives only until commit: from `leased` (the units Redis was leased and sold), or
 * from wherever the order's incarnation left them (libs/domain stock-moves.ts). A duplicate order number means the
 * order already exists: success. An order whose units MySQL cannot find is written FAILED and the release
 * script frees its buyer's hold in Redis.
 */
@Injectable()
export class OrderWriter {
  private readonly logger = new Logger(OrderWriter.name);
  private readonly optimisticLockRetries: number;

  constructor(
    private readonly orderWriting: OrderWritingRepository,
    private readonly scripts: ReservationScripts,
    private readonly layouts: SaleLayouts,
    @InjectAppConfig() config: AppConfig,
  ) {
    this.optimisticLockRetries = config.worker.optimisticLockRetries;
  }

  /** Writes a batch of orders of one sale; returns one outcome per input, in order. */
  async writeBatch(saleId: string, orders: readonly HandedOffOrder[]): Promise<WriteOutcome[]> {
    let decisions: Decision[];
    try {
      // Nearly every batch is new orders: insert them straight away, and look for rows already
      // written only when MySQL says one is (an entry delivered again after a worker died).
      decisions = await this.withOptimisticRetries(() => this.writeOnce(saleId, orders, false));
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
      decisions = await this.writeCheckingExisting(saleId, orders);
    }
    await this.releaseRejected(decisions);
    // Nothing is scheduled for the new orders' expiry: the worker's periodic sweep finds every order
    // past its expires_at (lifecycle/order-expiry.ts), so a batch costs no Redis work beyond its hand-off.
    return decisions.map((decision) => decision.outcome);
  }

  /** The batch again, skipping orders already written; one by one if MySQL still refuses one. */
  private async writeCheckingExisting(saleId: string, orders: readonly HandedOffOrder[]): Promise<Decision[]> {
    try {
      return await this.withOptimisticRetries(() => this.writeOnce(saleId, orders, true));
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
      const [single] = orders;
      if (orders.length === 1 && single) {
        // Either another worker wrote this very order since our read (failAndRelease sees it and
        // answers already-exists), or another order holds the buyer's purchase slot: MySQL refuses a
        // purchase beyond the per-user limit even when Redis allowed it.
        const outcome = await this.failAndRelease(single, FAILURE_REASONS.duplicateSlot);
        return [{ order: single, outcome: outcome === 'already-exists' ? 'already-exists' : 'rejected' }];
      }
      // Write them one by one so each order gets its own answer.
      const decisions: Decision[] = [];
      for (const order of orders) decisions.push(...(await this.writeCheckingExisting(saleId, [order])));
      return decisions;
    }
  }

  /**
   * MySQL refused the order (its buyer's slot is taken): the order is written FAILED, its leased units
   * go back to `available` in the same transaction (from where a lease hands them to Redis again), and
   * the buyer's hold in Redis is freed — so a reservation is never silently dropped and its units
   * never stranded.
   */
  private async failAndRelease(order: HandedOffOrder, reason: string): Promise<WriteOutcome> {
    let outcome: WriteOutcome = 'rejected';
    try {
      await this.writeFailed(order, reason);
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
      if ((await this.orderWriting.statusOf(order.orderNo)) !== undefined) {
        // This very order is written already: the duplicate is ours.
        outcome = 'already-exists';
      } else {
        // Another order holds this reservation's submit token, so this one is a second sale with it:
        // it is written FAILED without the token, and its units go back, rather than taken for done.
        this.logger.error(`Order ${order.orderNo}: its submit token already made another order; written FAILED`);
        await this.writeFailed({ ...order, submitToken: null }, FAILURE_REASONS.duplicateToken);
      }
    }
    const status = await this.orderWriting.statusOf(order.orderNo);
    if (status && RETURNED_STATUSES.includes(status)) await this.release(order);
    return outcome;
  }

  /** Inserts the order FAILED and gives its units back to `available`, in one transaction. */
  private writeFailed(order: HandedOffOrder, reason: string): Promise<void> {
    return this.withOptimisticRetries(() =>
      this.orderWriting.transaction(async (transaction) => {
        const sale = await transaction.readSale(order.saleId);
        await transaction.insert([this.row(order, 'FAILED', sale?.priceCents ?? 0, reason)]);
        if (!sale) return;
        const back = failedOrderMove(sale, order.epoch, order.quantity);
        if (back.available === 0) return; // nothing to give back (see failedOrderMove)
        if (!(await transaction.moveStock(order.saleId, sale.version, back))) throw new OptimisticConflict();
      }),
    );
  }

  private async writeOnce(
    saleId: string,
    orders: readonly HandedOffOrder[],
    lookForExisting: boolean,
  ): Promise<Decision[]> {
    return this.orderWriting.transaction(async (transaction) => {
      const sale = await transaction.readSale(saleId);
      if (!sale) {
        this.logger.warn(`Sale ${saleId} no longer exists: ${orders.length} of its orders dropped`);
        return orders.map((order): Decision => ({ order, outcome: 'sale-removed' }));
      }
      const { decisions, moved } = await this.writeIn(transaction, saleId, sale, orders, lookForExisting);
      if (!moved) throw new OptimisticConflict();
      return decisions;
    });
  }

  /**
   * The write path's statements and arithmetic for made-up orders of a sale row that exists only here,
   * in a transaction rolled back at the end (the worker's startup warm-up, write-path-warm-up.ts).
   */
  async writeRolledBack(sale: SaleStockRow, orders: readonly HandedOffOrder[]): Promise<void> {
    const [first] = orders;
    if (!first) return;
    await this.orderWriting.rolledBack(async (transaction) => {
      await transaction.readSale(first.saleId);
      await this.writeIn(transaction, first.saleId, sale, orders, true);
    });
  }

  /** The batch's rows and the sale row's move, in `transaction`; `moved` false: the version changed. */
  private async writeIn(
    transaction: OrderWritingTransaction,
    saleId: string,
    sale: SaleStockRow,
    orders: readonly HandedOffOrder[],
    lookForExisting: boolean,
  ): Promise<{ decisions: Decision[]; moved: boolean }> {
    const existing = lookForExisting
      ? await transaction.statusesOf(orders.map((order) => order.orderNo))
      : new Map<string, never>();
    const expiresAt = new Date(Date.now() + sale.paymentTimeoutSeconds * 1000);
    const decisions: Decision[] = [];
    const seen = new Set<string>();
    const rows: NewOrderRow[] = [];
    const take = new StockTake(sale);
    for (const order of orders) {
      const found = existing.get(order.orderNo);
      if (found !== undefined || seen.has(order.orderNo)) {
        // Already written (a retried or duplicated job). A FAILED one goes through the (idempotent)
        // release again, in case the earlier attempt died between its commit and the release.
        decisions.push({ order, outcome: found === 'FAILED' ? 'rejected' : 'already-exists' });
        continue;
      }
      seen.add(order.orderNo);
      if (take.take(unitSource(order.epoch, sale), order.quantity)) {
        rows.push(this.row(order, 'PENDING_PAYMENT', sale.priceCents, null, expiresAt));
        decisions.push({ order, outcome: 'created' });
      } else {
        rows.push(this.row(order, 'FAILED', sale.priceCents, FAILURE_REASONS.soldOutInMySql));
        decisions.push({ order, outcome: 'rejected' });
      }
    }
    if (rows.length > 0) await transaction.insert(rows);
    const moved = !take.changed || (await transaction.moveStock(saleId, sale.version, take.move));
    return { decisions, moved };
  }

  /** Frees the order's buyer hold, in the bucket of the sale that holds the buyer's records. */
  private async release(order: HandedOffOrder): Promise<ReleaseResult> {
    return this.scripts.release(buyerBucket(await this.layouts.of(order.saleId), order.userId), order.orderNo);
  }

  private withOptimisticRetries<T>(attempt: () => Promise<T>): Promise<T> {
    return withOptimisticRetries(attempt, { retries: this.optimisticLockRetries });
  }

  private async releaseRejected(decisions: readonly Decision[]): Promise<void> {
    for (const { order, outcome } of decisions) {
      if (outcome !== 'rejected') continue;
      const result = await this.release(order);
      if (result === 'released')
        this.logger.warn(`Order ${order.orderNo} refused: its units are not in MySQL's lease; buyer's hold freed`);
    }
  }

  private row(
    order: HandedOffOrder,
    status: OrderStatus,
    priceCents: number,
    failureReason: string | null,
    expiresAt: Date | null = null,
  ): NewOrderRow {
    const holding = status === 'PENDING_PAYMENT';
    return {
      orderNo: order.orderNo,
      saleId: order.saleId,
      userId: order.userId,
      // Only orders that hold units occupy a purchase slot; the unique index guards those.
      userSlot: holding ? order.slot : null,
      quantity: order.quantity,
      amountCents: order.quantity * priceCents,
      status,
      failureReason,
      reservedAt: order.reservedAt,
      expiresAt: holding ? expiresAt : null,
      leaseEpoch: order.epoch || null,
      bucket: order.bucket ?? 0,
      submitToken: order.submitToken,
    };
  }
}
