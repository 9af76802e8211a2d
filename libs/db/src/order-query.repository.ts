import type { OrderStatus } from '@flash-sale/domain';
import type { DataSource, Repository, SelectQueryBuilder } from 'typeorm';
import { OrderEntity } from './entities/order.entity';
import { UserEntity } from './entities/user.entity';
import { PaymentEntity } from './entities/payment.entity';

/** An order row with its buyer's name: the account's, else the name the guest gave (null if unknown). */
export interface OrderWithBuyerName {
  order: OrderEntity;
  userName: string | null;
  /** No account: a guest's order. */
  guest: boolean;
}

/** The admin's filter of one sale's orders; `beforeId` is the keyset cursor (the last row's id). */
export interface SaleOrdersFilter {
  status?: OrderStatus;
  /** An order-number prefix, or an exact user id or buyer name (an account's or a guest's). */
  search?: string;
  beforeId?: string;
}

/** Reads of written orders: the shopper's, the admin's pages and exports, the dashboard's history. */
export class OrderQueryRepository {
  private readonly orders: Repository<OrderEntity>;
  private readonly payments: Repository<PaymentEntity>;

  constructor(private readonly dataSource: DataSource) {
    this.orders = dataSource.getRepository(OrderEntity);
    this.payments = dataSource.getRepository(PaymentEntity);
  }

  findByOrderNo(orderNo: string): Promise<OrderEntity | null> {
    return this.orders.findOneBy({ orderNo });
  }

  /** The payment's own number (what a shopper quotes to support), once a payment exists. */
  async paymentReference(orderNo: string): Promise<string | undefined> {
    const payment = await this.payments.findOne({ select: { outTradeNo: true }, where: { orderNo } });
    return payment?.outTradeNo;
  }

  newestOfUser(userId: string, limit: number): Promise<OrderEntity[]> {
    return this.orders.find({ where: { userId }, order: { id: 'DESC' }, take: limit });
  }

  /** Which of these order numbers MySQL has a row for now. */
  async writtenAmong(orderNos: readonly string[]): Promise<Set<string>> {
    const written = new Set<string>();
    for (let i = 0; i < orderNos.length; i += 1000) {
      const chunk = orderNos.slice(i, i + 1000);
      const rows = (await this.dataSource.query(
        `SELECT order_no FROM orders WHERE order_no IN (${chunk.map(() => '?').join(', ')})`,
        chunk,
      )) as { order_no: string }[];
      for (const row of rows) written.add(row.order_no);
    }
    return written;
  }

  /** One page of a sale's orders, newest first (the admin's page and, batch by batch, its CSV export). */
  async salePage(saleId: string, filter: SaleOrdersFilter, limit: number): Promise<OrderWithBuyerName[]> {
    const query = this.withBuyerNames(saleId, 'DESC');
    if (filter.status) query.andWhere('o.status = :status', { status: filter.status });
    if (filter.search) {
      query.andWhere('(o.order_no LIKE :prefix OR o.user_id = :search OR u.name = :search OR g.name = :search)', {
        prefix: `${filter.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`,
        search: filter.search,
      });
    }
    if (filter.beforeId) query.andWhere('o.id < :beforeId', { beforeId: filter.beforeId });
    return this.read(query.take(limit));
  }

  /** Purchases per second of a sale since `since` (by reservation time), oldest first. */
  async purchasesPerSecond(saleId: string, since: Date): Promise<{ at: Date; purchases: number }[]> {
    const rows = (await this.dataSource.query(
      `SELECT FLOOR(UNIX_TIMESTAMP(reserved_at)) AS second, COUNT(*) AS purchases FROM orders
        WHERE sale_id = ? AND reserved_at >= ? GROUP BY second ORDER BY second`,
      [saleId, since],
    )) as { second: string | number; purchases: string | number }[];
    return rows.map((row) => ({ at: new Date(Number(row.second) * 1000), purchases: Number(row.purchases) }));
  }

  private withBuyerNames(saleId: string, direction: 'ASC' | 'DESC'): SelectQueryBuilder<OrderEntity> {
    return this.orders
      .createQueryBuilder('o')
      .leftJoin(UserEntity, 'u', 'u.id = o.user_id')
      .leftJoin('guest_names', 'g', 'g.user_id = o.user_id')
      .addSelect('u.name', 'account_name')
      .addSelect('g.name', 'guest_name')
      .where('o.sale_id = :saleId', { saleId })
      .orderBy('o.id', direction);
  }

  private async read(query: SelectQueryBuilder<OrderEntity>): Promise<OrderWithBuyerName[]> {
    const { entities, raw } = await query.getRawAndEntities();
    const rows = new Map(raw.map((row: Record<string, unknown>) => [String(row['o_id']), row]));
    return entities.map((order) => {
      const row = rows.get(order.id) ?? {};
      const account = row['account_name'];
      const guestName = row['guest_name'];
      if (typeof account === 'string') return { order, userName: account, guest: false };
      return { order, userName: typeof guestName === 'string' ? guestName : null, guest: true };
    });
  }
}
