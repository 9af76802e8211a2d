import { errorMessage } from '@flash-sale/domain';
import { type AppConfig, InjectAppConfig } from '@flash-sale/config';
import { type PurchaseLimits, RedisConnection, ReservationScripts } from '@flash-sale/redis';
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

  /** Spends one purchase of `userId` on `saleId` (and of the sale), or throws `429` with the wait. */
  async consume(saleId: string, userId: string): Promise<void> {
    // Redis down: the purchase goes to the MySQL fallback (or 503) on its own; the limits cannot be
    // counted and must not add a wait for a reconnect that is not coming.
    if (!this.redis.isReady) return;
    let waitMs: number;
    try {
      waitMs = await this.scripts.purchaseLimitWait(saleId, userId, this.limits);
    } catch (error) {
      this.logger.warn(`Purchase limits unavailable: ${errorMessage(error)}`);
      return;
    }
    if (waitMs > 0) throw rateLimited(waitMs);
  }
}
