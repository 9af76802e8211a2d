import type { AppConfig } from '@flash-sale/config';
import { DomainError, ErrorCode, OrderNumberGenerator } from '@flash-sale/domain';
import type { SaleEntity } from '@flash-sale/db';
import { type RedisClient, ReservationScripts } from '@flash-sale/redis';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { AuthUser } from '../auth/auth-user';
import { isDependencyDown } from '../common/error-body';
import { APP_CONFIG, REDIS_CLIENT } from '../infra/tokens';
import { MetricsService } from '../ops/metrics.service';
import { SaleCatalog } from '../sales/sale-catalog';
import { SalesService } from '../sales/sales.service';
import { DbPurchase, type OrderCreated } from './db-purchase';
import { OrderQueue } from './order-queue';
import { refusal } from './refusals';
import { SoldOutGate } from './sold-out-gate';
import { type IssuedSubmitToken, SubmitTokens } from './submit-tokens';

/** `QUEUED` (202): reserved in Redis, written by the worker. `PENDING_PAYMENT` (201): written in MySQL now. */
export type PurchaseAccepted = { orderNo: string; status: 'QUEUED' } | OrderCreated;

/** A fresh order number collides (~2^-80) or a Redis reload races us: a couple of tries is plenty. */
const MAX_RESERVE_ATTEMPTS = 3;

/**
 * The purchase path of DESIGN.md steps 2–4 — submit token, one reservation script, enqueue — and the
 * dispatch to the MySQL-only strategies of a sale that asked for one.
 */
@Injectable()
export class PurchaseService {
  private readonly logger = new Logger(PurchaseService.name);
  private readonly orderNumbers = new OrderNumberGenerator();
  /** Sales this instance sold through the fallback: reload them into Redis before Redis sells again. */
  private readonly reloadAfterFallback = new Set<string>();

  constructor(
    private readonly catalog: SaleCatalog,
    private readonly sales: SalesService,
    private readonly scripts: ReservationScripts,
    private readonly orderQueue: OrderQueue,
    private readonly dbPurchase: DbPurchase,
    private readonly tokens: SubmitTokens,
    private readonly soldOut: SoldOutGate,
    @Inject(REDIS_CLIENT) private readonly redis: RedisClient,
    private readonly metrics: MetricsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async issueToken(user: AuthUser, saleId: string): Promise<IssuedSubmitToken> {
    const sale = await this.catalog.get(saleId);
    if (sale.endsAt <= new Date()) throw new DomainError(ErrorCode.SaleEnded, 'This sale has ended');
    return this.tokens.issue(sale.id, user.id, sale.strategy === 'redis-lua');
  }

  async purchase(user: AuthUser, saleId: string, token: string, quantity: number): Promise<PurchaseAccepted> {
    try {
      const sale = await this.catalog.get(saleId);
      if (sale.strategy !== 'redis-lua') {
        const created = await this.dbPurchase.purchase(sale, user.id, token, quantity, sale.strategy);
        this.metrics.countPurchase('accepted');
        return created;
      }
      return await this.purchaseThroughRedis(sale, user, token, quantity);
    } catch (error) {
      this.metrics.countRefusedPurchase(error);
      throw error;
    }
  }

  /**
   * The redis-lua path, or — when Redis is unreachable and REDIS_FALLBACK is on — db-optimistic, so
   * the sale keeps selling correctly, only slower. Once Redis answers again the sale is reloaded from
   * MySQL before Redis sells anything, so no unit sold during the outage is sold twice.
   */
  private async purchaseThroughRedis(sale: SaleEntity, user: AuthUser, token: string, quantity: number) {
    if (this.config.purchase.redisFallback && this.redis.status !== 'ready') {
      return this.fallBack(sale, user, token, quantity);
    }
    if (this.reloadAfterFallback.delete(sale.id)) await this.sales.preload(sale.id);
    try {
      return await this.reserveAndEnqueue(sale, user, token, quantity);
    } catch (error) {
      if (!this.config.purchase.redisFallback || !isDependencyDown(error) || this.redis.status === 'ready') throw error;
      return this.fallBack(sale, user, token, quantity);
    }
  }

  private async fallBack(sale: SaleEntity, user: AuthUser, token: string, quantity: number): Promise<OrderCreated> {
    this.reloadAfterFallback.add(sale.id);
    const created = await this.dbPurchase.purchase(sale, user.id, token, quantity, 'db-optimistic');
    this.metrics.countPurchase('accepted');
    return created;
  }

  private async reserveAndEnqueue(
    sale: SaleEntity,
    user: AuthUser,
    token: string,
    quantity: number,
  ): Promise<PurchaseAccepted> {
    for (let attempt = 1; attempt <= MAX_RESERVE_ATTEMPTS; attempt++) {
      const reservationTimer = this.metrics.reservationTimer();
      const result = await this.scripts.reserve({
        saleId: sale.id,
        userId: user.id,
        token,
        quantity,
        orderNo: this.orderNumbers.next(sale.id),
      });
      reservationTimer();
      switch (result.kind) {
        case 'reserved':
        case 'replayed':
          // A replay enqueues again on purpose: if the first enqueue was lost (it failed with a 503, or
          // the API died after the script), the buyer's retry with the same token repairs it; if not,
          // the job id makes the add a no-op.
          await this.orderQueue.enqueueCreateOrder({
            orderNo: result.orderNo,
            saleId: sale.id,
            userId: user.id,
            quantity: result.quantity,
            slot: result.slot,
            reservedAt: result.reservedAt.toISOString(),
          });
          this.metrics.countPurchase(result.kind === 'replayed' ? 'replayed' : 'accepted');
          return { orderNo: result.orderNo, status: 'QUEUED' };
        case 'order-number-taken':
          continue;
        case 'refused':
          if (result.saleNotLoaded && attempt < MAX_RESERVE_ATTEMPTS) {
            // Redis lost the sale (restart without persistence, flush): reload it from MySQL, which
            // never resells a held unit, and try again.
            this.logger.warn(`Sale ${sale.id} was not loaded in Redis; preloading it from MySQL`);
            await this.sales.preload(sale.id);
            continue;
          }
          // Later buyers of this sale may then be answered by the flag (purchase/sold-out-fast-path.ts).
          if (result.code === ErrorCode.SoldOut) this.soldOut.noteSoldOut(sale.id);
          throw refusal(result.code);
      }
    }
    throw new DomainError(ErrorCode.Unavailable, 'Could not reserve right now, please retry');
  }
}
