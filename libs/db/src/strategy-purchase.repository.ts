import { HOLDING_STATUSES, type OrderStatus } from '@flash-sale/domain';
import type { DataSource, EntityManager } from 'typeorm';
import type { IsolationLevel } from 'typeorm/driver/types/IsolationLevel';
import { OrderEntity } from './entities/order.entity';
import { SaleBuyerRepository } from './sale-buyer.repository';
import type { SaleStockRepository, SaleStockRow } from './sale-stock.repository';
import { type StockSegment, StockSegmentRepository } from './stock-segments';

/** What a buyer holds in a sale, for the per-user limit and the order's purchase slot. */
export interface BuyerHolding {
  units: number;
  /** The buyer's lowest purchase slot not taken by a holding order. */
  freeSlot: number;
}

/** An order a synchronous purchase writes: PENDING_PAYMENT, with its submit token and purchase slot. */
export type NewOrder = Pick<
  OrderEntity,
  'orderNo' | 'saleId' | 'userId' | 'quantity' | 'amountCents' | 'reservedAt' | 'expiresAt'
> & { submitToken: string };

/** The order a submit token made, as it is now. */
export interface OrderOfSubmitToken {
  orderNo: string;
  userId: string;
  status: OrderStatus;
  /** Made by a Redis reservation (the incarnation it was reserved in), or null: MySQL sold it at once. */
  leaseEpoch: number | null;
}

/**
 * The statements of one synchronous purchase, all on the same transaction (or, for naive-unsafe, each
 * committed on its own). Which guard a strategy puts around the stock is the strategy's choice
 * (apps/api/src/purchase/strategies/); these are the reads and writes it can choose from.
 */
export class PurchaseStatements {
  constructor(
    private readonly manager: EntityManager,
    private readonly saleStock: SaleStockRepository,
    private readonly saleBuyers: SaleBuyerRepository,
    private readonly segments: StockSegmentRepository,
  ) {}

  /**
   * The Redis-down fallback's claim on the buyer (SaleBuyerRepository.claimForFallback): false when
   * Redis may have sold to them, and MySQL must not.
   */
  claimBuyerForFallback(saleId: string, userId: string): Promise<boolean> {
    return this.saleBuyers.claimForFallback(this.manager, saleId, userId);
  }

  /** The sale's stock with its version, no lock (db-optimistic: the version guards the update). */
  readVersioned(saleId: string): Promise<SaleStockRow | undefined> {
    return this.saleStock.read(this.manager, saleId);
  }

  /** Takes units if the row is still at `version`; false: an optimistic-lock conflict. */
  takeUnitsAtVersion(saleId: string, version: number, units: number): Promise<boolean> {
    return this.saleStock.takeUnits(this.manager, saleId, version, units);
  }

  /** The sale's `available`, its row locked until the transaction ends (db-pessimistic). */
  availableForUpdate(saleId: string): Promise<number> {
    return this.available(saleId, ' FOR UPDATE');
  }

  /** The sale's `available`, read without any lock or version. */
  availableUnguarded(saleId: string): Promise<number> {
    return this.available(saleId, '');
  }

  /** Takes units from a row this transaction holds locked (see `availableForUpdate`). */
  async takeUnitsLocked(saleId: string, units: number): Promise<void> {
    await this.manager.query('UPDATE sales SET available = available - ?, version = version + 1 WHERE id = ?', [
      units,
      saleId,
    ]);
  }

  /** A db-segmented sale's segments, no lock: each one's version guards its update. */
  readSegments(saleId: string): Promise<StockSegment[]> {
    return this.segments.read(this.manager, saleId);
  }

  /** Takes units from a segment still at the version read; false: an optimistic-lock conflict. */
  takeFromSegment(saleId: string, segment: StockSegment, units: number): Promise<boolean> {
    return this.segments.take(this.manager, saleId, segment, units);
  }

  /**
   * redis-lock: takes units only while the sale's row still carries this holder's fencing token (see
   * `StrategyPurchaseRepository.claimFence`); false when a newer holder has claimed it since — this
   * holder's lock ran out, and its write must not land. Relative to the row, not to what was read:
   * cancelled and expired orders give units back without the lock, and none of them is lost.
   */
  async takeUnitsFenced(saleId: string, units: number, fence: number): Promise<boolean> {
    const result = (await this.manager.query(
      'UPDATE sales SET available = available - ?, version = version + 1 WHERE id = ? AND fence = ?',
      [units, saleId, fence],
    )) as { affectedRows: number };
    return result.affectedRows === 1;
  }

  /**
   * UNSAFE ON PURPOSE (naive-unsafe; redis-lock-unfenced, which trusts its lock to be exclusive): writes
   * `available` as the caller computed it from an unguarded read, so a concurrent buyer's update in
   * between is lost.
   */
  async overwriteAvailable(saleId: string, available: number): Promise<void> {
    await this.manager.query('UPDATE sales SET available = ? WHERE id = ?', [available, saleId]);
  }

  /**
   * Where the sale's window stands by MySQL's own clock and MySQL's record of it, read with a shared lock:
   * after this transaction took its units (the row locked by its update, or shared here), an admin's edit
   * of the window commits either before this read — and is seen — or after this purchase's commit.
   */
  async windowByMySql(saleId: string): Promise<'live' | 'not-started' | 'ended'> {
    const [row] = (await this.manager.query(
      `SELECT starts_at <= UTC_TIMESTAMP(3) AS started, ends_at > UTC_TIMESTAMP(3) AS open
         FROM sales WHERE id = ? LOCK IN SHARE MODE`,
      [saleId],
    )) as { started: number | string; open: number | string }[];
    if (!row || Number(row.open) !== 1) return 'ended';
    return Number(row.started) === 1 ? 'live' : 'not-started';
  }

  async buyerHolding(saleId: string, userId: string): Promise<BuyerHolding> {
    return (await this.buyersHolding(saleId, [userId])).get(userId)!;
  }

  /** `buyerHolding` of several buyers in one query: every one of `userIds` has an entry. */
  async buyersHolding(saleId: string, userIds: readonly string[]): Promise<Map<string, BuyerHolding>> {
    const buyers = [...new Set(userIds)];
    const rows = (await this.manager.query(
      `SELECT user_id, quantity, user_slot FROM orders
        WHERE sale_id = ? AND user_id IN (${buyers.map(() => '?').join(', ')})
          AND status IN (${HOLDING_STATUSES.map(() => '?').join(', ')})`,
      [saleId, ...buyers, ...HOLDING_STATUSES],
    )) as { user_id: string; quantity: number; user_slot: number | null }[];
    return new Map(
      buyers.map((userId) => {
        const held = rows.filter((row) => row.user_id === userId);
        const taken = new Set(held.map((row) => Number(row.user_slot)));
        let freeSlot = 1;
        while (taken.has(freeSlot)) freeSlot += 1;
        return [userId, { units: held.reduce((units, row) => units + Number(row.quantity), 0), freeSlot }];
      }),
    );
  }

  /**
   * Inserts PENDING_PAYMENT orders (one statement however many). Unique order number, purchase slot and
   * submit token: a duplicate is refused with ER_DUP_ENTRY, and none of them is inserted.
   */
  async insertOrders(orders: readonly (NewOrder & { userSlot: number })[]): Promise<void> {
    await this.manager
      .getRepository(OrderEntity)
      .insert(orders.map((order) => ({ ...order, status: 'PENDING_PAYMENT' as const, failureReason: null })));
  }

  private async available(saleId: string, lock: '' | ' FOR UPDATE'): Promise<number> {
    const [row] = (await this.manager.query(`SELECT available FROM sales WHERE id = ?${lock}`, [saleId])) as {
      available: number;
    }[];
    return Number(row?.available ?? 0);
  }
}

/**
 * The MySQL side of the synchronous strategies (db-optimistic, db-segmented, db-pessimistic, the
 * redis-lock pair, naive-unsafe, and the Redis-down fallback): the facts their purchase rules need and the writes of an accepted purchase.
 */
export class StrategyPurchaseRepository {
  private readonly saleBuyers: SaleBuyerRepository;

  constructor(
    private readonly dataSource: DataSource,
    private readonly saleStock: SaleStockRepository,
  ) {
    this.saleBuyers = new SaleBuyerRepository(dataSource);
  }

  private readonly segments = new StockSegmentRepository();

  inTransaction<T>(work: (statements: PurchaseStatements) => Promise<T>, isolation?: IsolationLevel): Promise<T> {
    const run = (manager: EntityManager) =>
      work(new PurchaseStatements(manager, this.saleStock, this.saleBuyers, this.segments));
    return isolation ? this.dataSource.transaction(isolation, run) : this.dataSource.transaction(run);
  }

  /** Each statement committed at once, no transaction around them: what naive-unsafe runs. */
  withoutTransaction<T>(work: (statements: PurchaseStatements) => Promise<T>): Promise<T> {
    return work(new PurchaseStatements(this.dataSource.manager, this.saleStock, this.saleBuyers, this.segments));
  }

  /**
   * redis-lock: records this lock holder's fencing token on the sale's row, committed at once, before
   * the holder reads the stock — if no newer token is there. False: a newer holder claimed the row (this
   * one's lock ran out), or the token is below one MySQL saw (the Redis counter was lost: see `fenceOf`).
   * Claimed first so that a stale holder's write fails even when it comes after the newer holder's read
   * and before its write; committed on its own so a paused holder keeps no row lock.
   */
  async claimFence(saleId: string, fence: number): Promise<boolean> {
    const result = (await this.dataSource.query('UPDATE sales SET fence = ? WHERE id = ? AND fence < ?', [
      fence,
      saleId,
      fence,
    ])) as { affectedRows: number };
    return result.affectedRows === 1;
  }

  /** The largest fencing token the sale's row has seen. */
  async fenceOf(saleId: string): Promise<number> {
    const [row] = (await this.dataSource.query('SELECT fence FROM sales WHERE id = ?', [saleId])) as {
      fence: string | number;
    }[];
    return Number(row?.fence ?? 0);
  }

  /** The order a submit token made, by any path, with its status now. */
  async orderOfSubmitToken(submitToken: string): Promise<OrderOfSubmitToken | undefined> {
    const order = await this.dataSource.getRepository(OrderEntity).findOne({
      select: { orderNo: true, userId: true, status: true, leaseEpoch: true },
      where: { submitToken },
    });
    return order
      ? { orderNo: order.orderNo, userId: order.userId, status: order.status, leaseEpoch: order.leaseEpoch }
      : undefined;
  }

  /** An order as it is now; undefined while it is not written (a reservation the worker has yet to write). */
  async writtenOrder(orderNo: string): Promise<Pick<OrderOfSubmitToken, 'status' | 'leaseEpoch'> | undefined> {
    const order = await this.dataSource.getRepository(OrderEntity).findOne({
      select: { orderNo: true, status: true, leaseEpoch: true },
      where: { orderNo },
    });
    return order ? { status: order.status, leaseEpoch: order.leaseEpoch } : undefined;
  }
}
