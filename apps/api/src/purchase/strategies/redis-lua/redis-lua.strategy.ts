import type { SaleTerms } from '@flash-sale/domain';
import { Injectable } from '@nestjs/common';
import { buyerBucket } from '@flash-sale/redis';
import type { PurchaseOrder } from '../../purchase-body';
import type { PurchaseAccepted, StockStrategy, StockStrategyPlugin } from '../../stock-strategy';
import { DurableAck } from '../../../durability/durable-ack';
import { IncarnationGuard } from './incarnation-guard';
import { RedisBuyers } from './redis-buyers';
import { RedisDownFallback } from './redis-down-fallback';
import { RedisReservation } from './redis-reservation';
import { RedisTokens } from './redis-tokens';
import { ReservationFollowUp } from './reservation-follow-up';
import { SoldOutFastPath } from './sold-out-fast-path';
import { SoldOutGate } from './sold-out-gate';
import { WriteOrdersNudge } from './write-orders-nudge';

/**
 * `redis-lua` (docs/architecture.md "The purchase path"): MySQL leases units to Redis, one reservation
 * script per purchase checks the submit token, the per-user limit, the rate limits and the leased
 * balance, reserves and hands the order to the sale's writer in the worker. While Redis cannot be
 * reached (REDIS_FALLBACK), the sale sells from MySQL instead (RedisDownFallback).
 */
@Injectable()
export class RedisLuaStrategy implements StockStrategy {
  constructor(
    private readonly reservation: RedisReservation,
    private readonly fallback: RedisDownFallback,
    private readonly tokens: RedisTokens,
    private readonly durableAck: DurableAck,
    /** After a sell-out, 410 SOLD_OUT without touching Redis or spending a rate limit. */
    readonly earlyAnswer: SoldOutFastPath,
  ) {}

  /** The reservation script counts them with the reservation; a purchase the fallback sells has them spent before. */
  countsRateLimits(): boolean {
    return !this.fallback.takesOver();
  }

  tokenIssued(sale: SaleTerms, userId: string, token: string, ttlSeconds: number): Promise<void> {
    return this.tokens.store(sale, userId, token, ttlSeconds);
  }

  async sell(sale: SaleTerms, userId: string, order: PurchaseOrder): Promise<PurchaseAccepted> {
    if (!this.fallback.takesOver()) {
      const reloading = this.fallback.beforeRedisSells(sale.id);
      if (reloading) await reloading;
      // 503 + retry-after while no replica can confirm a reservation (DURABLE_ACK): nothing is done yet.
      this.durableAck.admit(() => buyerBucket(sale, userId));
      try {
        return await this.reservation.reserve(sale, userId, order);
      } catch (error) {
        if (!this.fallback.takesOverAfter(error)) throw error;
        return this.fallback.sell(sale, userId, order);
      }
    }
    return this.fallback.sell(sale, userId, order);
  }
}

export const redisLua: StockStrategyPlugin = {
  implementation: RedisLuaStrategy,
  providers: [
    RedisReservation,
    ReservationFollowUp,
    RedisDownFallback,
    RedisTokens,
    RedisBuyers,
    IncarnationGuard,
    SoldOutGate,
    SoldOutFastPath,
    WriteOrdersNudge,
  ],
};
