import { OrderEntity, SaleEntity } from '@flash-sale/db';
import { DomainError, ErrorCode, HOLDING_STATUSES, saleStatus } from '@flash-sale/domain';
import { ReservationScripts, SaleRedisRepository } from '@flash-sale/redis';
import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { In, type Repository } from 'typeorm';
import type { CreateSaleDto, SaleView, UpdateSaleDto } from './sale.dto';
import { SaleCatalog } from './sale-catalog';

@Injectable()
export class SalesService {
  constructor(
    @InjectRepository(SaleEntity) private readonly sales: Repository<SaleEntity>,
    @InjectRepository(OrderEntity) private readonly orders: Repository<OrderEntity>,
    private readonly catalog: SaleCatalog,
    private readonly scripts: ReservationScripts,
    private readonly saleRedis: SaleRedisRepository,
  ) {}

  async create(input: CreateSaleDto): Promise<SaleView> {
    const startsAt = input.startsAt ? new Date(input.startsAt) : new Date();
    const endsAt = new Date(input.endsAt);
    if (endsAt <= startsAt) {
      throw new DomainError(ErrorCode.ValidationFailed, 'endsAt must be after startsAt');
    }
    const strategy = input.strategy ?? 'redis-lua';
    const sale = await this.sales.save(
      this.sales.create({
        name: input.name,
        description: input.description ?? null,
        imageUrl: input.imageUrl ?? null,
        priceCents: input.priceCents,
        stock: input.stock,
        available: input.stock,
        perUserLimit: input.perUserLimit ?? 1,
        startsAt,
        endsAt,
        strategy,
        paymentTimeoutSeconds: input.paymentTimeoutSeconds ?? 600,
      }),
    );
    if (sale.strategy !== 'redis-lua') return this.view(sale, sale.available); // MySQL-only: nothing to load
    // A new id must not inherit keys left by a database that was reset under a living Redis.
    await this.saleRedis.reset(sale.id);
    const { sellable } = await this.scripts.preload(this.preloadInput(sale), []);
    return this.view(sale, sellable);
  }

  /**
   * An admin's edit. A new `endsAt` in the past ends the sale now (clamped to now, and never before it
   * started); Redis gets the new window through the preload, which checks it on every purchase.
   */
  async update(saleId: string, input: UpdateSaleDto): Promise<SaleView> {
    const sale = await this.catalog.get(saleId);
    const changes: Partial<SaleEntity> = {};
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
    if (Object.keys(changes).length > 0) {
      // Column-wise update: the stock columns are never written here, whatever the worker does meanwhile.
      await this.sales.update({ id: sale.id }, changes);
      this.catalog.forget(sale.id);
    }
    if (changes.endsAt && sale.strategy === 'redis-lua') return this.preload(sale.id);
    return this.get(sale.id);
  }

  /** Idempotent: Redis sells `stock − units taken`, the union of its reservations and MySQL's holding orders. */
  async preload(saleId: string): Promise<SaleView> {
    const sale = await this.catalog.get(saleId);
    if (sale.strategy !== 'redis-lua') return this.get(saleId); // MySQL-only sales have nothing in Redis
    const holding = await this.orders.find({
      select: { orderNo: true, userId: true, quantity: true, userSlot: true, reservedAt: true },
      where: { saleId, status: In([...HOLDING_STATUSES]) },
    });
    const { sellable } = await this.scripts.preload(
      this.preloadInput(sale),
      holding.map((order) => ({
        orderNo: order.orderNo,
        userId: order.userId,
        quantity: order.quantity,
        slot: order.userSlot ?? 1,
        reservedAt: order.reservedAt,
      })),
    );
    return this.view(sale, sellable);
  }

  async list(): Promise<SaleView[]> {
    const sales = await this.sales.find({ order: { startsAt: 'DESC', id: 'DESC' }, take: 200 });
    const remaining = await Promise.all(sales.map((sale) => this.remaining(sale)));
    return sales.map((sale, i) => this.view(sale, remaining[i] ?? 0));
  }

  async get(saleId: string): Promise<SaleView> {
    const sale = await this.catalog.get(saleId);
    return this.view(sale, await this.remaining(sale));
  }

  /**
   * Live remaining units: Redis for a Redis-backed sale; MySQL for a MySQL-only one, and for a
   * Redis-backed one that Redis has not loaded or cannot be reached (the fallback sells from MySQL).
   */
  private async remaining(sale: SaleEntity): Promise<number> {
    if (sale.strategy === 'redis-lua') {
      const fromRedis = await this.saleRedis.remaining(sale.id).catch(() => undefined);
      if (fromRedis !== undefined) return fromRedis;
    }
    const fresh = await this.sales.findOneBy({ id: sale.id });
    return fresh?.available ?? 0;
  }

  private preloadInput(sale: SaleEntity) {
    return {
      saleId: sale.id,
      startsAt: sale.startsAt,
      endsAt: sale.endsAt,
      perUserLimit: sale.perUserLimit,
      stock: sale.stock,
    };
  }

  private view(sale: SaleEntity, remaining: number): SaleView {
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
    };
  }
}
