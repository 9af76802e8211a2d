import { errorMessage } from '@flash-sale/domain';
import { type AppConfig, InjectAppConfig } from '@flash-sale/config';
import {
  buyerBucket,
  type PurchaseLimits,
  RedisConnection,
  ReservationScripts,
  type SaleLayout,
  singleBucketSale,
} from '@flash-sale/redis';
import type { FastifyRequest } from 'fastify';
import { Injectable, Logger } from '@nestjs/common';
import { rateLimited } from './retry-later.error';

/** Set by the admission hook on a purchase whose rate limits are still to be counted. */
const LIMITS_DUE = Symbol('purchaseLimitsDue');
type WithLimitsDue = FastifyRequest & { [LIMITS_DUE]?: true };

/**
 * The purchase route's rate limits: per user (per sale) and per sale, counted together on two keys
 * that share the sale's hash tag `{sale:<id>}` (libs/redis/lua/includes/purchase-limits.lua). A
 * purchase that reaches the reservation script has them counted there, in the same script — one
 * Redis command per purchase; every other purchase (an invalid body, a MySQL-only strategy, an unknown
 * sale) spends them here, before its answer, as docs/api.md's order (401, 429, then the rest) requires.
 * A sold-out answer given locally spends none (docs/api.md's sold-out exception). Sign-in and token limits, which are not hot, use
 * rate-limiter-flexible (rate-limits.ts).
 */
@Injectable()
export class PurchaseRateLimit {
  private readonly logger = new Logger(PurchaseRateLimit.name);
  readonly limits: PurchaseLimits;

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

  /** The admission hook leaves the counting to the purchase route (and, through it, the script). */
  markDue(request: FastifyRequest): void {
    (request as WithLimitsDue)[LIMITS_DUE] = true;
  }

  isDue(request: FastifyRequest): boolean {
    return (request as WithLimitsDue)[LIMITS_DUE] === true;
  }

  /**
   * The limits as counted in one bucket of the sale: the sale's budget is split evenly over its buckets
   * (buyers are spread evenly over them), a buyer's own limit is whole in their bucket.
   */
  limitsFor(sale: SaleLayout): PurchaseLimits {
    if (sale.buckets === 1) return this.limits;
    const { perUser, perSale } = this.limits;
    return { perUser, perSale: { ...perSale, points: Math.ceil(perSale.points / sale.buckets) } };
  }

  /**
   * Spends one purchase of `userId` on the sale (and of the sale), or throws `429` with the wait. A sale
   * not known yet counts as one with a single bucket.
   */
  async consume(sale: SaleLayout | string, userId: string): Promise<void> {
    const layout = typeof sale === 'string' ? singleBucketSale(sale) : sale;
    // Redis down: the purchase goes to the MySQL fallback (or 503) on its own; the limits cannot be
    // counted and must not add a wait for a reconnect that is not coming.
    if (!this.redis.isReady) return;
    let waitMs: number;
    try {
      waitMs = await this.scripts.purchaseLimitWait(buyerBucket(layout, userId), userId, this.limitsFor(layout));
    } catch (error) {
      this.logger.warn(`Purchase limits unavailable: ${errorMessage(error)}`);
      return;
    }
    if (waitMs > 0) throw rateLimited(waitMs);
  }
}
