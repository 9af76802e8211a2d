import { StockLeases } from '@flash-sale/stock';
import { type ListedSale, SaleRepository } from '@flash-sale/db';
import type { Sale } from '@flash-sale/contract';
import {
  DomainError,
  ErrorCode,
  SALE_PURPOSES,
  SALE_STRATEGY_STOCK,
  type SaleDefinition,
  type SaleEdit,
  type SalePurpose,
  sellsFromRedis,
} from '@flash-sale/domain';
import { SaleState } from '@flash-sale/redis';
import { type AppConfig, InjectAppConfig } from '@flash-sale/config';
import { Injectable } from '@nestjs/common';
import type { CreateSaleDto, UpdateSaleDto } from './sale.dto';
import { SaleCatalog } from './sale-catalog';
import { newSaleOf, roomSettings, saleView } from './sale-mapping';

/**
 * What keeps a sale's waiting room in Redis as MySQL's settings say: the waiting-room module's, which
 * registers itself at start (`keepRoomsWith`) — the room is that module's to write, and sales know
 * nothing of it beyond these two moments.
 */
export interface SaleRooms {
  /** A new sale with a room: nothing a reset database left under the same id, then its settings. */
  open(sale: SaleDefinition): Promise<void>;
  /** The room's settings or the sale's window changed (or were preloaded): written to Redis. */
  write(sale: SaleDefinition): Promise<void>;
}

@Injectable()
export class SalesService {
  private rooms?: SaleRooms;

  constructor(
    private readonly sales: SaleRepository,
    private readonly catalog: SaleCatalog,
    private readonly leases: StockLeases,
    private readonly saleRedis: SaleState,
    @InjectAppConfig() config: AppConfig,
  ) {
    this.defaultBuckets = config.purchase.saleBucketsDefault;
  }

  /** Buckets of a redis-lua sale created without `buckets` (SALE_BUCKETS_DEFAULT). */
  private readonly defaultBuckets: number;

  keepRoomsWith(rooms: SaleRooms): void {
    this.rooms = rooms;
  }

  private roomsKept(): SaleRooms {
    if (!this.rooms) throw new Error('No waiting-room module keeps the rooms: import WaitingRoomModule');
    return this.rooms;
  }

  async create(input: CreateSaleDto): Promise<Sale> {
    const sale = await this.sales.create(newSaleOf(input, this.defaultBuckets));
    if (sale.waitingRoom) await this.roomsKept().open(sale);
    // Sold from MySQL: nothing to load, and every unit is still there.
    if (!sellsFromRedis(sale.strategy)) return saleView(sale, sale.stock);
    // A new id must not inherit keys left by a database that was reset under a living Redis.
    await this.saleRedis.reset(sale);
    await this.leases.openNewSale(sale.id);
    return this.get(sale.id);
  }

  /**
   * An admin's edit. A new `endsAt` in the past ends the sale now (clamped to now, and never before it
   * started). A Redis-backed sale's new window is applied to MySQL and Redis together or refused (503,
   * MySQL unchanged): Redis judges every purchase by its copy, and must never sell after the end MySQL
   * holds (docs/failure-model.md "A sale's window").
   */
  async update(saleId: string, input: UpdateSaleDto): Promise<Sale> {
    const sale = await this.catalog.get(saleId);
    const changes: SaleEdit = {};
    if (input.name !== undefined) changes.name = input.name;
    if (input.description !== undefined) changes.description = input.description || null;
    if (input.imageUrl !== undefined) changes.imageUrl = input.imageUrl || null;
    if (input.endsAt !== undefined) {
      const now = new Date();
      const requested = new Date(input.endsAt);
      const endsAt = requested < now ? now : requested;
      if (endsAt <= sale.startsAt) {
        throw new DomainError(ErrorCode.ValidationFailed, 'endsAt must be after startsAt');
      }
      changes.endsAt = endsAt;
    }
    if (changes.endsAt && sellsFromRedis(sale.strategy)) {
      try {
        await this.leases.changeWindow(sale.id, changes);
      } finally {
        this.catalog.forget(sale.id);
      }
    } else if (Object.keys(changes).length > 0) {
      await this.sales.updateDefinition(sale.id, changes);
      this.catalog.forget(sale.id);
    }
    if (input.waitingRoom !== undefined) {
      await this.sales.setWaitingRoom(sale.id, roomSettings(input.waitingRoom));
      this.catalog.forget(sale.id);
    }
    if (input.waitingRoom !== undefined || (changes.endsAt && sale.waitingRoom)) {
      await this.roomsKept().write(await this.catalog.get(sale.id));
    }
    if (changes.endsAt && sellsFromRedis(sale.strategy)) return this.preload(sale.id);
    return this.get(sale.id);
  }

  /**
   * Idempotent: makes Redis sell on MySQL's current incarnation of the sale (a new one if Redis lost
   * it), with what MySQL sold meanwhile, then leases it stock if it runs low.
   */
  async preload(saleId: string): Promise<Sale> {
    const sale = await this.catalog.get(saleId);
    if (sellsFromRedis(sale.strategy)) await this.leases.ensureLoaded(saleId);
    if (sale.waitingRoom) await this.roomsKept().write(sale);
    return this.get(saleId);
  }

  /** The storefront's list: shop sales that have not ended (test data and past sales stay out). */
  async list(): Promise<Sale[]> {
    return this.views(await this.sales.shopSalesEndingAfter(new Date(), 200));
  }

  /** The admin's list: every sale, or those of one purpose (`?purpose=load-test`). */
  async adminList(purpose?: string): Promise<Sale[]> {
    if (purpose !== undefined && purpose !== '' && !(SALE_PURPOSES as readonly string[]).includes(purpose)) {
      throw new DomainError(ErrorCode.ValidationFailed, `purpose must be one of ${SALE_PURPOSES.join(', ')}`);
    }
    return this.views(await this.sales.newestFirst(200, (purpose || undefined) as SalePurpose | undefined));
  }

  private async views(sales: ListedSale[]): Promise<Sale[]> {
    // These rows were just read: their `available` is fresh (a sale kept in segment rows has it there).
    const remaining = await Promise.all(
      sales.map((sale) =>
        this.remainingUnits(sale, SALE_STRATEGY_STOCK[sale.strategy] === 'segment-rows' ? undefined : sale.available),
      ),
    );
    const now = new Date();
    return sales.map((sale, i) => saleView(sale, remaining[i] ?? 0, now));
  }

  async get(saleId: string): Promise<Sale> {
    const sale = await this.catalog.get(saleId);
    return saleView(sale, await this.remainingUnits(sale));
  }

  /**
   * The remaining units, and whether that count is settled — true in the sense of `410 SOLD_OUT`
   * (docs/failure-model.md "The answer rules"): not while a Redis-backed sale has units in doubt or on
   * their way to Redis, nor while Redis cannot be read or does not hold the sale (lost with its data).
   * Those units are not sold, only not sellable right now: nobody may be told `sold_out` for them.
   *
   * Redis's balance counts at most the units MySQL still leases to it (`leased − inDoubt`): a copy of Redis
   * older than its last sales (restored, or a replica promoted while it lagged) holds a balance MySQL has
   * seen sold since, until the purchase path finds the copy stale. Such a reading is capped, and not
   * settled. Both reads may straddle a lease or an order's write; either way the cap errs low.
   */
  async remainingSettled(sale: SaleDefinition): Promise<{ remaining: number; settled: boolean }> {
    if (!sellsFromRedis(sale.strategy)) return { remaining: await this.remainingUnits(sale), settled: true };
    const [available, fromRedis, outside, onTheirWay] = await Promise.all([
      this.sales.available(sale.id),
      this.saleRedis.remaining(sale).catch(() => undefined),
      this.leases.unitsOutsideMySql(sale.id),
      this.leases.leasesOnTheirWay(sale.id),
    ]);
    const stillLeased = Math.max(0, outside.leased - outside.inDoubt);
    const settled = fromRedis !== undefined && fromRedis <= stillLeased && outside.inDoubt === 0 && onTheirWay === 0;
    return { remaining: available + Math.min(fromRedis ?? 0, stillLeased), settled };
  }

  /**
   * Live remaining units: what MySQL has not leased (`available`), plus, for a Redis-backed sale, the
   * balance Redis can still sell of its leases (nothing when Redis cannot be reached).
   */
  async remainingUnits(sale: SaleDefinition, freshAvailable?: number): Promise<number> {
    const [available, fromRedis] = await Promise.all([
      freshAvailable ?? this.sales.available(sale.id),
      sellsFromRedis(sale.strategy) ? this.saleRedis.remaining(sale).catch(() => undefined) : undefined,
    ]);
    return available + (fromRedis ?? 0);
  }
}
