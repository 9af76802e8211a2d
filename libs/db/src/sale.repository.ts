import type { SalePurpose } from '@flash-sale/domain';
import { type DataSource, IsNull, LessThanOrEqual, MoreThan, Not, type Repository } from 'typeorm';
import { SaleEntity } from './entities/sale.entity';
import { StockSegmentRepository } from './stock-segments';

/** What an admin gives for a new sale; the stock columns start from `stock`. */
export type NewSale = Pick<
  SaleEntity,
  | 'name'
  | 'description'
  | 'imageUrl'
  | 'priceCents'
  | 'stock'
  | 'perUserLimit'
  | 'startsAt'
  | 'endsAt'
  | 'strategy'
  | 'paymentTimeoutSeconds'
  | 'purpose'
  | 'buckets'
> &
  Partial<Pick<SaleEntity, 'waitingRoom'>>;

/** What an admin may edit on a sale: its description and window, never its stock columns. */
export type SaleDefinitionChanges = Partial<Pick<SaleEntity, 'name' | 'description' | 'imageUrl' | 'endsAt'>>;

/** Sales' definitions (the stock columns are the stock repositories' and the worker's). */
export class SaleRepository {
  private readonly sales: Repository<SaleEntity>;
  private readonly segments = new StockSegmentRepository();

  constructor(private readonly dataSource: DataSource) {
    this.sales = dataSource.getRepository(SaleEntity);
  }

  /** A db-segmented sale starts with its whole stock in its segments, the others on the sale's row. */
  async create(sale: NewSale): Promise<SaleEntity> {
    if (sale.strategy !== 'db-segmented') return this.sales.save(this.sales.create({ ...sale, available: sale.stock }));
    return this.dataSource.transaction(async (manager) => {
      const saved = await manager.save(manager.create(SaleEntity, { ...sale, available: 0 }));
      await this.segments.create(manager, saved.id, sale.stock);
      return saved;
    });
  }

  /** Column-wise: the stock columns are never written here, whatever the worker does meanwhile. */
  async updateDefinition(saleId: string, changes: SaleDefinitionChanges): Promise<void> {
    await this.sales.update({ id: saleId }, changes);
  }

  /** Adds, changes or (null) removes the sale's waiting room; Redis's copy is the room's to write. */
  async setWaitingRoom(saleId: string, waitingRoom: SaleEntity['waitingRoom']): Promise<void> {
    await this.sales.update({ id: saleId }, { waitingRoom });
  }

  findById(saleId: string): Promise<SaleEntity | null> {
    return this.sales.findOneBy({ id: saleId });
  }

  /** Every sale, or those of one purpose (the admin's list). */
  newestFirst(limit: number, purpose?: SalePurpose): Promise<SaleEntity[]> {
    return this.sales.find({
      where: purpose === undefined ? {} : { purpose },
      order: { startsAt: 'DESC', id: 'DESC' },
      take: limit,
    });
  }

  /** The storefront's sales: shop sales that have not ended by `now` (test data and past sales stay out). */
  shopSalesEndingAfter(now: Date, limit: number): Promise<SaleEntity[]> {
    return this.sales.find({
      where: { purpose: 'shop', endsAt: MoreThan(now) },
      order: { startsAt: 'DESC', id: 'DESC' },
      take: limit,
    });
  }

  /** Ids of the sales with a waiting room that ended after `since` (or have not ended): the room metrics. */
  async roomSaleIdsEndingAfter(since: Date, limit = 50): Promise<string[]> {
    const rows = await this.sales.find({
      select: { id: true },
      where: { endsAt: MoreThan(since), waitingRoom: Not(IsNull()) },
      order: { id: 'DESC' },
      take: limit,
    });
    return rows.map((row) => row.id);
  }

  /** Units MySQL has neither leased nor sold, read now (a db-segmented sale's segments included). */
  async available(saleId: string): Promise<number> {
    const [row, segmented] = await Promise.all([
      this.sales.findOne({ select: { available: true }, where: { id: saleId } }),
      this.segments.available(this.dataSource.manager, saleId),
    ]);
    return (row?.available ?? 0) + segmented;
  }

  endingAfter(since: Date): Promise<SaleEntity[]> {
    return this.sales.find({ where: { endsAt: MoreThan(since) } });
  }

  /** The ids of the Redis-backed (`redis-lua`) sales that start by `to` and end after `from`. */
  async redisBackedOpenBetween(from: Date, to: Date): Promise<string[]> {
    const sales = await this.sales.find({
      select: { id: true },
      where: { strategy: 'redis-lua', startsAt: LessThanOrEqual(to), endsAt: MoreThan(from) },
    });
    return sales.map((sale) => String(sale.id));
  }
}
