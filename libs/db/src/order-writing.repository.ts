import type { OrderStatus } from '@flash-sale/domain';
import type { DataSource, EntityManager } from 'typeorm';
import { OrderEntity } from './entities/order.entity';
import type { StockMove } from '@flash-sale/domain';
import type { SaleStockRepository, SaleStockRow } from './sale-stock.repository';

/** The columns the order writer sets; the others keep their defaults (version 0, timestamps now). */
export type NewOrderRow = Pick<
  OrderEntity,
  | 'orderNo'
  | 'saleId'
  | 'userId'
  | 'userSlot'
  | 'quantity'
  | 'amountCents'
  | 'status'
  | 'failureReason'
  | 'reservedAt'
  | 'expiresAt'
  | 'leaseEpoch'
  | 'bucket'
  | 'submitToken'
>;

/**
 * The statements of one order-writing transaction, all on its connection. Plain SQL: the group
 * commit's critical path is one transaction per sale at a time, and TypeORM's builders spent more CPU
 * building these statements than MySQL spent running them.
 */
export class OrderWritingTransaction {
  constructor(
    private readonly manager: EntityManager,
    private readonly saleStock: SaleStockRepository,
  ) {}

  /** The sale's stock columns, unlocked: the version makes the later `moveStock` safe. */
  readSale(saleId: string): Promise<SaleStockRow | undefined> {
    return this.saleStock.read(this.manager, saleId);
  }

  /** The status of each of these orders that is already written, by order number. */
  async statusesOf(orderNos: readonly string[]): Promise<Map<string, OrderStatus>> {
    const found = (await this.manager.query(
      `SELECT order_no, status FROM orders WHERE order_no IN (${orderNos.map(() => '?').join(', ')})`,
      [...orderNos],
    )) as { order_no: string; status: OrderStatus }[];
    return new Map(found.map((row) => [row.order_no, row.status]));
  }

  /** One multi-row INSERT; a duplicate order number, purchase slot or submit token fails it whole. */
  async insert(rows: readonly NewOrderRow[]): Promise<void> {
    const params: unknown[] = [];
    const times = new DateTimeLiterals();
    for (const row of rows) {
      params.push(
        row.orderNo,
        row.saleId,
        row.userId,
        row.userSlot,
        row.quantity,
        row.amountCents,
        row.status,
        row.failureReason,
        times.of(row.reservedAt),
        row.expiresAt && times.of(row.expiresAt),
        row.leaseEpoch,
        row.bucket,
        row.submitToken,
      );
    }
    await this.manager.query(
      `INSERT INTO orders (order_no, sale_id, user_id, user_slot, quantity, amount_cents, status, failure_reason,
         reserved_at, expires_at, lease_epoch, bucket, submit_token)
       VALUES ${rows.map(() => '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}`,
      params,
    );
  }

  /** Applies `move` if the sale's row is still at `expectedVersion`; false is an optimistic-lock conflict. */
  moveStock(saleId: string, expectedVersion: number, move: StockMove): Promise<boolean> {
    return this.saleStock.move(this.manager, saleId, expectedVersion, move);
  }
}

/**
 * DATETIME(3) literals in UTC (the connection's `timezone: 'Z'`), as the driver would write the dates:
 * a batch's rows share one expiry, formatted once, and the engine's ISO formatting is cheaper than the
 * driver's field-by-field one, which the order writer paid for every date of every row.
 */
class DateTimeLiterals {
  private last: Date | undefined;
  private lastLiteral = '';

  of(date: Date): string {
    if (date !== this.last) {
      const iso = date.toISOString(); // 2026-11-29T23:34:31.869Z
      this.last = date;
      this.lastLiteral = `${iso.slice(0, 10)} ${iso.slice(11, 23)}`;
    }
    return this.lastLiteral;
  }
}

/** MySQL as the worker's order writer uses it: its transactions, and the status of a written order. */
export class OrderWritingRepository {
  constructor(
    private readonly dataSource: DataSource,
    private readonly saleStock: SaleStockRepository,
  ) {}

  /**
   * Runs `work` in one READ COMMITTED transaction, so the version read just before the update is the
   * latest committed one (see OrderTransitionRepository).
   */
  transaction<T>(work: (transaction: OrderWritingTransaction) => Promise<T>): Promise<T> {
    return this.dataSource.transaction('READ COMMITTED', (manager) =>
      work(new OrderWritingTransaction(manager, this.saleStock)),
    );
  }

  /**
   * Runs `work` as `transaction` does, then rolls back whatever it did: the worker's startup warm-up
   * runs its write path this way. Nothing it wrote is ever seen (READ COMMITTED, never committed); an
   * error of `work` other than the rollback itself is thrown.
   */
  async rolledBack(work: (transaction: OrderWritingTransaction) => Promise<unknown>): Promise<void> {
    try {
      await this.transaction(async (transaction) => {
        await work(transaction);
        throw new RollBack();
      });
    } catch (error) {
      if (!(error instanceof RollBack)) throw error;
    }
  }

  /** The order's status, or undefined when it is not written. */
  async statusOf(orderNo: string): Promise<OrderStatus | undefined> {
    return (await this.dataSource.getRepository(OrderEntity).findOneBy({ orderNo }))?.status;
  }
}

/** Thrown at the end of `rolledBack`'s work: what rolls its transaction back. */
class RollBack extends Error {}
