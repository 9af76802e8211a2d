import { DomainError, ErrorCode, type SaleDefinition } from '@flash-sale/domain';
import { Injectable } from '@nestjs/common';
import type { AuthUser } from '../common/auth-user';
import { MetricsService } from '../metrics/metrics.service';
import { PurchaseRateLimits } from '../protection/purchase-rate-limits';
import { SaleCatalog } from '../sales/sale-catalog';
import { WaitingRoom } from '../waiting-room/waiting-room.service';
import { DbPurchase, type OrderCreated } from './db-purchase';
import type { PurchaseOrder } from './purchase-body';
import { RedisDownFallback } from './redis-down-fallback';
import { RedisReservation } from './redis-reservation';
import { type IssuedSubmitToken, SubmitTokens } from './submit-tokens';

/** `QUEUED` (202): reserved in Redis, written by the worker. `PENDING_PAYMENT` (201): written in MySQL now. */
export type PurchaseAccepted = { orderNo: string; status: 'QUEUED' } | OrderCreated;

/**
 * Submit tokens and purchases, sent the way the sale sells (docs/architecture.md, "Strategies"):
 * redis-lua through the reservation script (or, while Redis is down, the MySQL fallback), every other
 * strategy straight against MySQL. The rate limits are spent where PurchaseRateLimits says.
 */
@Injectable()
export class PurchaseService {
  constructor(
    private readonly catalog: SaleCatalog,
    private readonly tokens: SubmitTokens,
    private readonly rateLimits: PurchaseRateLimits,
    private readonly reservation: RedisReservation,
    private readonly fallback: RedisDownFallback,
    private readonly dbPurchase: DbPurchase,
    private readonly metrics: MetricsService,
    private readonly room: WaitingRoom,
  ) {}

  /** `pass`: a sale with a waiting room issues tokens only to the buyers it admitted. */
  async issueToken(user: AuthUser, saleId: string, pass?: string): Promise<IssuedSubmitToken> {
    const sale = await this.catalog.get(saleId);
    if (sale.endsAt <= new Date()) throw new DomainError(ErrorCode.SaleEnded, 'This sale has ended');
    this.room.requireAdmission(sale, user.id, pass);
    return this.tokens.issue(sale, user.id, sale.strategy === 'redis-lua');
  }

  /** A verified caller's purchase, its body valid; every refusal is thrown. */
  async purchase(userId: string, saleId: string, order: PurchaseOrder): Promise<PurchaseAccepted> {
    const sale = await this.saleOf(saleId, userId);
    if (!sale.waitingRoom) return this.sell(sale, userId, order);
    try {
      const accepted = await this.sell(sale, userId, order);
      this.room.buyerDone(sale, userId, order.quantity);
      return accepted;
    } catch (error) {
      if (endsTurn(error)) this.room.buyerDone(sale, userId, 0);
      throw error;
    }
  }

  private async sell(sale: SaleDefinition, userId: string, order: PurchaseOrder): Promise<PurchaseAccepted> {
    if (sale.strategy === 'redis-lua' && !this.fallback.takesOver()) {
      await this.fallback.beforeRedisSells(sale.id);
      try {
        return await this.reservation.reserve(sale, userId, order);
      } catch (error) {
        if (!this.fallback.takesOverAfter(error)) throw error;
        return this.sold(await this.fallback.sell(sale, userId, order));
      }
    }
    await this.rateLimits.spendNow(sale, userId);
    if (sale.strategy === 'redis-lua') return this.sold(await this.fallback.sell(sale, userId, order));
    return this.sold(await this.dbPurchase.purchase(sale, userId, order.token, order.quantity, sale.strategy));
  }

  /** The sale, or 404 — after the rate limits, which come first (docs/api.md's order). */
  private async saleOf(saleId: string, userId: string): Promise<SaleDefinition> {
    try {
      return await this.catalog.get(saleId);
    } catch (error) {
      await this.rateLimits.spendNow(saleId, userId);
      throw error;
    }
  }

  private sold(created: OrderCreated): OrderCreated {
    this.metrics.countPurchase('accepted');
    return created;
  }
}

/** A refusal after which the buyer cannot buy in this sale with another try: their turn in its room is over. */
function endsTurn(error: unknown): boolean {
  return (
    error instanceof DomainError &&
    (error.code === ErrorCode.LimitReached || error.code === ErrorCode.SoldOut || error.code === ErrorCode.SaleEnded)
  );
}
