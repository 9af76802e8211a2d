import type { AppConfig } from '@flash-sale/config';
import {
  isDuplicateKeyError,
  OptimisticConflict,
  OrderEntity,
  type SaleEntity,
  SaleStockRepository,
  withOptimisticRetries,
} from '@flash-sale/db';
import { DomainError, ErrorCode, HOLDING_STATUSES, OrderNumberGenerator } from '@flash-sale/domain';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { APP_CONFIG } from '../infra/tokens';
import { SubmitTokens } from './submit-tokens';

/** The MySQL-only ways to sell, for comparison with redis-lua (DESIGN.md "Strategies"). */
export type DbStrategy = 'db-optimistic' | 'db-pessimistic' | 'naive-unsafe';

export interface OrderCreated {
  orderNo: string;
  status: 'PENDING_PAYMENT';
}

interface Buyer {
  units: number;
  freeSlot: number;
}

/**
 * Synchronous purchases straight against MySQL, same checks and errors as the Redis path, in three
 * flavours:
 * - `db-optimistic`: read the sale's version, write conditionally on it, retry on conflict;
 * - `db-pessimistic`: `SELECT … FOR UPDATE` the sale row, then write;
 * - `naive-unsafe`: read, check, write back the value it read, with no guard. UNSAFE ON PURPOSE: two
 *   buyers that read the same `available` both succeed and one update is lost — it oversells under
 *   load, which is what the comparison exists to show.
 * Orders remember their submit token (unique), which makes a replay return the same order.
 */
@Injectable()
export class DbPurchase {
  private readonly logger = new Logger(DbPurchase.name);
  private readonly orderNumbers = new OrderNumberGenerator();

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly saleStock: SaleStockRepository,
    private readonly tokens: SubmitTokens,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async purchase(
    sale: SaleEntity,
    userId: string,
    token: string,
    quantity: number,
    strategy: DbStrategy,
  ): Promise<OrderCreated> {
    this.checkWindowAndToken(sale, userId, token);
    const replayed = await this.orderOfToken(token, userId);
    if (replayed) return replayed;

    const order = this.newOrder(sale, userId, token, quantity);
    try {
      if (strategy === 'db-optimistic') await this.optimistic(sale, order);
      else if (strategy === 'db-pessimistic') await this.pessimistic(sale, order);
      else await this.naiveUnsafe(sale, order);
    } catch (error) {
      const limitHit = error instanceof DomainError && error.code === ErrorCode.LimitReached;
      if (!isDuplicateKeyError(error) && !limitHit) throw error;
      // The same token raced itself (a double click): the one that got in made the order, which is
      // the answer to every click — whether this one lost on the unique token, or saw that order
      // count against the per-user limit.
      const winner = await this.orderOfToken(token, userId);
      if (winner) return winner;
      if (limitHit) throw error;
      // The buyer's purchase slot was taken by a concurrent purchase of theirs with another token.
      throw new DomainError(ErrorCode.LimitReached, 'You already bought as many as this sale allows per person');
    }
    // Its expiry needs nothing here (and so no Redis, which may be down in the fallback): the worker's
    // sweep expires every PENDING_PAYMENT order past its expires_at, however it was written.
    return { orderNo: order.orderNo!, status: 'PENDING_PAYMENT' };
  }

  private optimistic(sale: SaleEntity, order: Partial<OrderEntity>): Promise<void> {
    return withOptimisticRetries(
      () =>
        this.dataSource.transaction('READ COMMITTED', async (manager) => {
          const stock = await this.saleStock.read(manager, sale.id);
          await this.insertIfAllowed(manager, sale, order, stock?.available ?? 0);
          if (!(await this.saleStock.takeUnits(manager, sale.id, stock!.version, order.quantity!))) {
            throw new OptimisticConflict();
          }
        }),
      { retries: this.config.worker.optimisticLockRetries },
    );
  }

  private pessimistic(sale: SaleEntity, order: Partial<OrderEntity>): Promise<void> {
    return this.dataSource.transaction(async (manager) => {
      const [row] = (await manager.query('SELECT available FROM sales WHERE id = ? FOR UPDATE', [sale.id])) as {
        available: number;
      }[];
      await this.insertIfAllowed(manager, sale, order, Number(row?.available ?? 0));
      await manager.query('UPDATE sales SET available = available - ?, version = version + 1 WHERE id = ?', [
        order.quantity,
        sale.id,
      ]);
    });
  }

  private async naiveUnsafe(sale: SaleEntity, order: Partial<OrderEntity>): Promise<void> {
    const manager = this.dataSource.manager;
    const [row] = (await manager.query('SELECT available FROM sales WHERE id = ?', [sale.id])) as {
      available: number;
    }[];
    const available = Number(row?.available ?? 0);
    await this.insertIfAllowed(manager, sale, order, available);
    // Writes back what it read minus its own units: a concurrent buyer's update is silently lost.
    await manager.query('UPDATE sales SET available = ? WHERE id = ?', [available - order.quantity!, sale.id]);
  }

  /** Per-user limit, then stock (API.md order), then the insert. */
  private async insertIfAllowed(
    manager: EntityManager,
    sale: SaleEntity,
    order: Partial<OrderEntity>,
    available: number,
  ) {
    const buyer = await this.buyer(manager, sale, order.userId!);
    if (buyer.units + order.quantity! > sale.perUserLimit) {
      throw new DomainError(ErrorCode.LimitReached, 'You already bought as many as this sale allows per person');
    }
    if (available < order.quantity!) throw new DomainError(ErrorCode.SoldOut, 'Sold out');
    await manager.getRepository(OrderEntity).insert({ ...order, userSlot: buyer.freeSlot });
  }

  private async buyer(manager: EntityManager, sale: SaleEntity, userId: string): Promise<Buyer> {
    const rows = (await manager.query(
      `SELECT quantity, user_slot FROM orders WHERE sale_id = ? AND user_id = ? AND status IN (${HOLDING_STATUSES.map(() => '?').join(', ')})`,
      [sale.id, userId, ...HOLDING_STATUSES],
    )) as { quantity: number; user_slot: number | null }[];
    const taken = new Set(rows.map((row) => Number(row.user_slot)));
    let freeSlot = 1;
    while (taken.has(freeSlot)) freeSlot += 1;
    return { units: rows.reduce((units, row) => units + Number(row.quantity), 0), freeSlot };
  }

  private newOrder(sale: SaleEntity, userId: string, token: string, quantity: number): Partial<OrderEntity> {
    const now = new Date();
    return {
      orderNo: this.orderNumbers.next(sale.id),
      saleId: sale.id,
      userId,
      quantity,
      amountCents: quantity * sale.priceCents,
      status: 'PENDING_PAYMENT',
      failureReason: null,
      submitToken: token,
      reservedAt: now,
      expiresAt: new Date(now.getTime() + sale.paymentTimeoutSeconds * 1000),
    };
  }

  /** The sale window, then the signed submit token (API.md's order: 409/410 before 403). */
  checkWindowAndToken(sale: SaleEntity, userId: string, token: string): void {
    const now = new Date();
    if (now < sale.startsAt) throw new DomainError(ErrorCode.SaleNotStarted, 'This sale has not started yet');
    if (now >= sale.endsAt) throw new DomainError(ErrorCode.SaleEnded, 'This sale has ended');
    if (!this.tokens.verify(token, sale.id, userId)) {
      throw new DomainError(ErrorCode.TokenInvalid, 'The submit token is unknown, expired, or not yours for this sale');
    }
  }

  /** The order a submit token made, if MySQL has it (written by any path); another user's → 403. */
  async orderOfToken(token: string, userId: string): Promise<OrderCreated | undefined> {
    const order = await this.dataSource.getRepository(OrderEntity).findOne({
      select: { orderNo: true, userId: true },
      where: { submitToken: token },
    });
    if (!order) return undefined;
    if (order.userId !== userId) throw new DomainError(ErrorCode.TokenInvalid, 'This submit token is not yours');
    return { orderNo: order.orderNo, status: 'PENDING_PAYMENT' };
  }
}
