import {
  type NewSaleDefinition,
  REDIS_BACKED_STRATEGIES,
  SALE_STRATEGY_STOCK,
  type SaleDefinition,
  type SaleEdit,
  type SalePurpose,
} from '@flash-sale/domain';
import { type DataSource, In, IsNull, LessThanOrEqual, MoreThan, Not, type Repository } from 'typeorm';
import { SaleEntity } from './entities/sale.entity';
import { StockSegmentRepository } from './stock-segments';

/**
 * A sale read for a list: its definition and the units its row had not leased nor sold when read (a
 * sale kept in segment rows has them there, not on its row: ask `available`).
 */
export type ListedSale = SaleDefinition & { available: number };

/** Sales' definitions (the stock columns are the stock repositories' and the worker's). */
export class SaleRepository {
  private readonly sales: Repository<SaleEntity>;
  private readonly segments = new StockSegmentRepository();

  constructor(private readonly dataSource: DataSource) {
    this.sales = dataSource.getRepository(SaleEntity);
  }

  /** A sale kept in segment rows starts with its whole stock in them, the others on the sale's row. */
  async create(sale: NewSaleDefinition): Promise<SaleDefinition> {
    if (SALE_STRATEGY_STOCK[sale.strategy] !== 'segment-rows') {
      return saleDefinitionOf(await this.sales.save(this.sales.create({ ...sale, available: sale.stock })));
    }
    return this.dataSource.transaction(async (manager) => {
      const saved = await manager.save(manager.create(SaleEntity, { ...sale, available: 0 }));
      await this.segments.create(manager, saved.id, sale.stock);
      return saleDefinitionOf(saved);
    });
  }

  /** Column-wise: the stock columns are never written here, whatever the worker does meanwhile. */
  async updateDefinition(saleId: string, changes: SaleEdit): Promise<void> {
    await this.sales.update({ id: saleId }, changes);
  }

  /** Adds, changes or (null) removes the sale's waiting room; Redis's copy is the room's to write. */
  async setWaitingRoom(saleId: string, waitingRoom: SaleDefinition['waitingRoom']): Promise<void> {
    await this.sales.update({ id: saleId }, { waitingRoom });
  }

  async findById(saleId: string): Promise<SaleDefinition | undefined> {
    const row = await this.sales.findOneBy({ id: saleId });
    return row ? saleDefinitionOf(row) : undefined;
  }

  /** Every sale, or those of one purpose (the admin's list). */
  async newestFirst(limit: number, purpose?: SalePurpose): Promise<ListedSale[]> {
    const rows = await this.sales.find({
      where: purpose === undefined ? {} : { purpose },
      order: { startsAt: 'DESC', id: 'DESC' },
      take: limit,
    });
    return rows.map(listedSaleOf);
  }

  /** The storefront's sales: shop sales that have not ended by `now` (test data and past sales stay out). */
  async shopSalesEndingAfter(now: Date, limit: number): Promise<ListedSale[]> {
    const rows = await this.sales.find({
      where: { purpose: 'shop', endsAt: MoreThan(now) },
      order: { startsAt: 'DESC', id: 'DESC' },
      take: limit,
    });
    return rows.map(listedSaleOf);
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

  async endingAfter(since: Date): Promise<SaleDefinition[]> {
    return (await this.sales.find({ where: { endsAt: MoreThan(since) } })).map(saleDefinitionOf);
  }

  /** The ids of the Redis-backed sales that start by `to` and end after `from`. */
  async redisBackedOpenBetween(from: Date, to: Date): Promise<string[]> {
    const sales = await this.sales.find({
      select: { id: true },
      where: { strategy: In(REDIS_BACKED_STRATEGIES), startsAt: LessThanOrEqual(to), endsAt: MoreThan(from) },
    });
    return sales.map((sale) => String(sale.id));
  }
}

/** The one mapping of a sale's row to the domain's sale; the stock columns stay the ledger's. */
export function saleDefinitionOf(row: SaleEntity): SaleDefinition {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    imageUrl: row.imageUrl,
    priceCents: row.priceCents,
    stock: row.stock,
    perUserLimit: row.perUserLimit,
    startsAt: row.startsAt,
    endsAt: row.endsAt,
    strategy: row.strategy,
    paymentTimeoutSeconds: row.paymentTimeoutSeconds,
    purpose: row.purpose,
    buckets: row.buckets,
    waitingRoom: row.waitingRoom,
  };
}

function listedSaleOf(row: SaleEntity): ListedSale {
  return { ...saleDefinitionOf(row), available: row.available };
}
