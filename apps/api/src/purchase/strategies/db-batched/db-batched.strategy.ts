import { type AppConfig, InjectAppConfig } from '@flash-sale/config';
import {
  type NewOrder,
  isDuplicateKeyError,
  type PurchaseStatements,
  StrategyPurchaseRepository,
  withOptimisticRetries,
} from '@flash-sale/db';
import type { DomainError } from '@flash-sale/domain';
import { Injectable } from '@nestjs/common';
import type { StockStrategyPlugin } from '../../stock-strategy';
import type { WrittenOrder } from '../../token-orders';
import { type MySqlPurchase, MySqlPurchases } from '../mysql/mysql-purchases';
import { MySqlStrategy } from '../mysql/mysql-strategy';

/** How long the first purchase of a sale waits for others to join its batch, while none of the sale's is in flight. */
const GATHER_MS = 2;
/** Purchases in one transaction at most: one statement inserts their orders, one update takes their units. */
const MAX_BATCH = 100;

/** What one purchase of a batch learns: its order went in, a refusal, the order its token made earlier in the batch, or wait for the next batch. */
type Outcome =
  | { kind: 'inserted' }
  | { kind: 'refused'; error: DomainError }
  | { kind: 'replay'; of: WrittenOrder }
  | { kind: 'next-batch' };

interface Member {
  purchase: MySqlPurchase;
  settle(outcome: void | WrittenOrder): void;
  fail(error: unknown): void;
}

/** One sale's purchases on this process: those gathering for the next batch, and whether one is in flight. */
interface SaleQueue {
  gathering: Member[];
  inFlight: boolean;
  timer?: NodeJS.Timeout;
}

/**
 * `db-batched`: group commit on the hot row, the way large shops sell without Redis (Alibaba's
 * "inventory hint", here in application code). The purchases of one sale that arrive on this process
 * together are gathered (for GATHER_MS, or while the sale's previous batch is in flight, up to
 * MAX_BATCH) and sold in one transaction: the sale's row locked once, the rules decided for each buyer
 * in arrival order against what is left, every accepted order inserted by one statement, the units taken
 * by one update. The row lock serializes batches across processes, as db-pessimistic serializes single
 * purchases — but one lock wait and a handful of round trips now serve a whole batch.
 *
 * Each buyer still gets their own answer: `201`, or the refusal the purchase rules give them with what
 * the earlier buyers of the batch left. A token sent twice in one batch gets the same order; a buyer with
 * two purchases in one batch has the second sold in the next batch (their purchase slots are counted
 * from what MySQL holds). A batch whose insert finds a token or slot taken by another process meanwhile
 * (a unique index refuses it) is sold again one purchase at a time, so only that purchase learns it.
 */
@Injectable()
export class DbBatchedStrategy extends MySqlStrategy {
  private readonly queues = new Map<string, SaleQueue>();

  constructor(
    purchases: MySqlPurchases,
    repository: StrategyPurchaseRepository,
    @InjectAppConfig() private readonly config: AppConfig,
  ) {
    super(purchases, repository);
  }

  protected takeStock(purchase: MySqlPurchase): Promise<void | WrittenOrder> {
    return new Promise((settle, fail) => {
      const saleId = purchase.sale.id;
      let queue = this.queues.get(saleId);
      if (!queue) this.queues.set(saleId, (queue = { gathering: [], inFlight: false }));
      queue.gathering.push({ purchase, settle, fail });
      // While a batch is in flight, the next one gathers until it is done (`flush` sends it then).
      if (queue.inFlight) return;
      if (queue.gathering.length >= MAX_BATCH) this.flush(saleId, queue);
      else queue.timer ??= setTimeout(() => this.flush(saleId, queue), GATHER_MS);
    });
  }

  private flush(saleId: string, queue: SaleQueue): void {
    clearTimeout(queue.timer);
    queue.timer = undefined;
    const batch = queue.gathering.splice(0, MAX_BATCH);
    if (batch.length === 0) {
      this.queues.delete(saleId);
      return;
    }
    queue.inFlight = true;
    void this.commit(batch).finally(() => {
      queue.inFlight = false;
      this.flush(saleId, queue);
    });
  }

  /** Sells a batch; a member told to wait joins the next one (it is gathering already). */
  private async commit(batch: Member[]): Promise<void> {
    let outcomes: Outcome[];
    try {
      outcomes = await withOptimisticRetries(
        () => this.repository.inTransaction((statements) => this.sellTogether(statements, batch), 'READ COMMITTED'),
        { retries: this.config.worker.optimisticLockRetries },
      );
    } catch (error) {
      if (batch.length > 1 && isDuplicateKeyError(error)) {
        for (const member of batch) await this.commit([member]);
        return;
      }
      for (const member of batch) member.fail(error);
      return;
    }
    batch.forEach((member, i) => {
      const outcome = outcomes[i]!;
      if (outcome.kind === 'inserted') member.settle();
      else if (outcome.kind === 'replay') member.settle(outcome.of);
      else if (outcome.kind === 'refused') member.fail(outcome.error);
      else this.takeStock(member.purchase).then(member.settle, member.fail);
    });
  }

  /** One transaction for the batch: every member's outcome, the accepted ones inserted and their units taken. */
  private async sellTogether(statements: PurchaseStatements, batch: readonly Member[]): Promise<Outcome[]> {
    const sale = batch[0]!.purchase.sale;
    let available = await statements.availableForUpdate(sale.id);
    // With the row locked: an admin's edit of the window commits before this read or after the batch.
    await this.purchases.refuseOutsideMySqlWindow(statements, sale);
    const holdings = await statements.buyersHolding(
      sale.id,
      batch.map(({ purchase }) => purchase.order.userId),
    );
    const inserted = new Map<string, NewOrder & { userSlot: number }>();
    const buyersInBatch = new Set<string>();
    const outcomes = batch.map(({ purchase }): Outcome => {
      const { order } = purchase;
      const earlier = inserted.get(order.submitToken);
      if (earlier) {
        return {
          kind: 'replay',
          of: { orderNo: earlier.orderNo, status: 'PENDING_PAYMENT', made: 'written', replay: true },
        };
      }
      if (buyersInBatch.has(order.userId)) return { kind: 'next-batch' };
      const holding = holdings.get(order.userId)!;
      const refused = this.purchases.refusalOf(purchase, holding.units, available);
      if (refused) return { kind: 'refused', error: refused };
      available -= order.quantity;
      buyersInBatch.add(order.userId);
      inserted.set(order.submitToken, { ...order, userSlot: holding.freeSlot });
      return { kind: 'inserted' };
    });
    if (inserted.size > 0) {
      const orders = [...inserted.values()];
      await statements.insertOrders(orders);
      await statements.takeUnitsLocked(
        sale.id,
        orders.reduce((units, order) => units + order.quantity, 0),
      );
    }
    return outcomes;
  }
}

export const dbBatched: StockStrategyPlugin = { implementation: DbBatchedStrategy };
