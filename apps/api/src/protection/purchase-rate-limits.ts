import { errorMessage, isSaleId, type SaleLayout } from '@flash-sale/domain';
import { type AppConfig, InjectAppConfig } from '@flash-sale/config';
import {
  buyerBucket,
  type PurchaseRateLimitSettings,
  RedisConnection,
  ReservationScripts,
  singleBucketSale,
} from '@flash-sale/redis';
import { Injectable, Logger } from '@nestjs/common';
import { rateLimited } from './retry-later.error';

/**
 * Where a purchase's rate limits are spent — per user (per sale) and per sale, counted together on two
 * keys in the buyer's bucket of the sale (libs/redis/lua/includes/purchase-rate-limits.lua). docs/api.md's
 * order is 401, then 429, then every other answer, so every purchase of a verified caller spends them
 * exactly once before its answer:
 * - `inReservation`: a redis-lua purchase that reaches the reservation script has them counted by
 *   that script, atomically with the reservation (one Redis command for the whole purchase);
 * - `spendNow`: every other purchase — a bad body, an unknown sale, a MySQL strategy, the Redis-down
 *   fallback — spends them here before it is answered, called from PurchaseService alone.
 * Two answers spend none: 401 (no caller to count) and the local sold-out answer (docs/api.md's
 * sold-out exception: a final answer that changes nothing needs no protection). A malformed sale id
 * gets no counter either (it names no sale; an attacker gets no key of their choosing). Sign-in and
 * token limits, which are not hot, use rate-limiter-flexible (rate-limits.ts).
 */
@Injectable()
export class PurchaseRateLimits {
  private readonly logger = new Logger(PurchaseRateLimits.name);
  private readonly limits: PurchaseRateLimitSettings;

  constructor(
    @InjectAppConfig() config: AppConfig,
    private readonly redis: RedisConnection,
    private readonly scripts: ReservationScripts,
  ) {
    const { purchasesPerUser, purchasesPerSale } = config.protection.limits;
    this.limits = {
      perUser: { points: purchasesPerUser.points, windowMs: purchasesPerUser.durationSeconds * 1000 },
      perSale: { points: purchasesPerSale.points, windowMs: purchasesPerSale.durationSeconds * 1000 },
    };
  }

  /**
   * The limits the reservation script counts in the buyer's bucket: the sale's budget is split evenly
   * over its buckets (buyers are spread evenly over them), a buyer's own limit is whole in their bucket.
   */
  inReservation(sale: SaleLayout): PurchaseRateLimitSettings {
    if (sale.buckets === 1) return this.limits;
    const { perUser, perSale } = this.limits;
    return { perUser, perSale: { ...perSale, points: Math.ceil(perSale.points / sale.buckets) } };
  }

  /**
   * Spends one purchase of `userId` on the sale (and of the sale), or throws `429` with the wait. A sale
   * not known (yet) counts as one with a single bucket.
   */
  async spendNow(sale: SaleLayout | string, userId: string): Promise<void> {
    const layout = typeof sale === 'string' ? singleBucketSale(sale) : sale;
    // Redis down: the purchase goes to the MySQL fallback (or 503) on its own; the limits cannot be
    // counted and must not add a wait for a reconnect that is not coming.
    if (!isSaleId(layout.id) || !this.redis.isReady) return;
    let waitMs: number;
    try {
      waitMs = await this.scripts.purchaseRateLimitWait(
        buyerBucket(layout, userId),
        userId,
        this.inReservation(layout),
      );
    } catch (error) {
      this.logger.warn(`Purchase limits unavailable: ${errorMessage(error)}`);
      return;
    }
    if (waitMs > 0) throw rateLimited(waitMs);
  }
}
