import { StockLeases } from '@flash-sale/stock';
import { type SaleDefinitionChanges, SaleRepository } from '@flash-sale/db';
import {
  DomainError,
  ErrorCode,
  SALE_PURPOSES,
  type SaleDefinition,
  type SalePurpose,
  saleStatus,
} from '@flash-sale/domain';
import { SaleRedisRepository, WaitingRoomScripts } from '@flash-sale/redis';
import { type AppConfig, InjectAppConfig } from '@flash-sale/config';
import { WAITING_ROOM_DEFAULTS, type WaitingRoomRequest, type WaitingRoomSettings } from '@flash-sale/contract';
import { Injectable } from '@nestjs/common';
import type { CreateSaleDto, SaleView, UpdateSaleDto } from './sale.dto';
import { SaleCatalog } from './sale-catalog';

@Injectable()
export class SalesService {
  constructor(
    private readonly sales: SaleRepository,
    private readonly catalog: SaleCatalog,
    private readonly leases: StockLeases,
    private readonly saleRedis: SaleRedisRepository,
    private readonly rooms: WaitingRoomScripts,
    @InjectAppConfig() config: AppConfig,
  ) {
    this.defaultBuckets = config.purchase.saleBucketsDefault;
  }

  /** Buckets of a redis-lua sale created without `buckets` (SALE_BUCKETS_DEFAULT). */
  private readonly defaultBuckets: number;

  async create(input: CreateSaleDto): Promise<SaleView> {
    const startsAt = input.startsAt ? new Date(input.startsAt) : new Date();
    const endsAt = new Date(input.endsAt);
    if (endsAt <= startsAt) {
      throw new DomainError(ErrorCode.ValidationFailed, 'endsAt must be after startsAt');
    }
    const strategy = input.strategy ?? 'redis-lua';
    if (input.buckets !== undefined && input.buckets > 1 && strategy !== 'redis-lua') {
      throw new DomainError(ErrorCode.ValidationFailed, 'buckets applies to redis-lua sales only');
    }
    const buckets = strategy === 'redis-lua' ? (input.buckets ?? this.defaultBuckets) : 1;
    const sale = await this.sales.create({
      name: input.name,
      description: input.description ?? null,
      imageUrl: input.imageUrl ?? null,
      priceCents: input.priceCents,
      stock: input.stock,
      perUserLimit: input.perUserLimit ?? 1,
      startsAt,
      endsAt,
      strategy,
      paymentTimeoutSeconds: input.paymentTimeoutSeconds ?? 600,
      purpose: input.purpose ?? 'shop',
      buckets,
      waitingRoom: roomSettings(input.waitingRoom),
    });
    if (sale.waitingRoom) {
      // A new id must not inherit a room left by a database that was reset under a living Redis.
      await this.rooms.remove(sale.id);
      await this.rooms.write(sale);
    }
    // MySQL-only: nothing to load.
    if (sale.strategy !== 'redis-lua')
      return this.view(sale, sale.strategy === 'db-segmented' ? sale.stock : sale.available);
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
  async update(saleId: string, input: UpdateSaleDto): Promise<SaleView> {
    const sale = await this.catalog.get(saleId);
    const changes: SaleDefinitionChanges = {};
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
    if (changes.endsAt && sale.strategy === 'redis-lua') {
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
      await this.rooms.write(await this.catalog.get(sale.id));
    }
    if (changes.endsAt && sale.strategy === 'redis-lua') return this.preload(sale.id);
    return this.get(sale.id);
  }

  /**
   * Idempotent: makes Redis sell on MySQL's current incarnation of the sale (a new one if Redis lost
   * it), with what MySQL sold meanwhile, then leases it stock if it runs low.
   */
  async preload(saleId: string): Promise<SaleView> {
    const sale = await this.catalog.get(saleId);
    if (sale.strategy === 'redis-lua') await this.leases.ensureLoaded(saleId);
    if (sale.waitingRoom) await this.rooms.write(sale);
    return this.get(saleId);
  }

  /** The storefront's list: shop sales that have not ended (test data and past sales stay out). */
  async list(): Promise<SaleView[]> {
    return this.views(await this.sales.shopSalesEndingAfter(new Date(), 200));
  }

  /** The admin's list: every sale, or those of one purpose (`?purpose=load-test`). */
  async adminList(purpose?: string): Promise<SaleView[]> {
    if (purpose !== undefined && purpose !== '' && !(SALE_PURPOSES as readonly string[]).includes(purpose)) {
      throw new DomainError(ErrorCode.ValidationFailed, `purpose must be one of ${SALE_PURPOSES.join(', ')}`);
    }
    return this.views(await this.sales.newestFirst(200, (purpose || undefined) as SalePurpose | undefined));
  }

  private async views(sales: (SaleDefinition & { available: number })[]): Promise<SaleView[]> {
    // These rows were just read: their `available` is fresh (a db-segmented sale's is in its segments).
    const remaining = await Promise.all(
      sales.map((sale) => this.remainingUnits(sale, sale.strategy === 'db-segmented' ? undefined : sale.available)),
    );
    return sales.map((sale, i) => this.view(sale, remaining[i] ?? 0));
  }

  async get(saleId: string): Promise<SaleView> {
    const sale = await this.catalog.get(saleId);
    return this.view(sale, await this.remainingUnits(sale));
  }

  /**
   * Live remaining units: what MySQL has not leased (`available`), plus, for a Redis-backed sale, the
   * balance Redis can still sell of its leases (nothing when Redis cannot be reached).
   */
  async remainingUnits(sale: SaleDefinition, freshAvailable?: number): Promise<number> {
    const [available, fromRedis] = await Promise.all([
      freshAvailable ?? this.sales.available(sale.id),
      sale.strategy === 'redis-lua' ? this.saleRedis.remaining(sale).catch(() => undefined) : undefined,
    ]);
    return available + (fromRedis ?? 0);
  }

  private view(sale: SaleDefinition, remaining: number): SaleView {
    return {
      id: sale.id,
      name: sale.name,
      description: sale.description,
      imageUrl: sale.imageUrl,
      priceCents: sale.priceCents,
      stock: sale.stock,
      remaining,
      perUserLimit: sale.perUserLimit,
      startsAt: sale.startsAt.toISOString(),
      endsAt: sale.endsAt.toISOString(),
      strategy: sale.strategy,
      paymentTimeoutSeconds: sale.paymentTimeoutSeconds,
      status: saleStatus(sale, remaining, new Date()),
      purpose: sale.purpose,
      buckets: sale.buckets,
      waitingRoom: sale.waitingRoom ?? null,
    };
  }
}

/** A room as stored and shown: the request with its defaults filled in, or null for none. */
function roomSettings(request: WaitingRoomRequest | null | undefined): WaitingRoomSettings | null {
  if (!request) return null;
  return {
    admitPerSecond: request.admitPerSecond,
    ...(request.maxShopping === undefined ? {} : { maxShopping: request.maxShopping }),
    passSeconds: request.passSeconds ?? WAITING_ROOM_DEFAULTS.passSeconds,
  };
}
