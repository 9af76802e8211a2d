import type { AppConfig } from '@flash-sale/config';
import type { RedisClient } from '@flash-sale/redis';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, REDIS_CLIENT } from '../infra/tokens';
import { rateLimited } from './retry-later.error';

/**
 * purchase-limit-2: the per-user and the per-sale purchase limits in ONE atomic step, fixed windows.
 *
 * KEYS[1]  the buyer's counter for this sale   <prefix>:{sale:<id>}:rl:purchase-user:<userId>
 * KEYS[2]  the sale's counter                  <prefix>:{sale:<id>}:rl:purchase-sale
 * ARGV[1]  purchases a user may attempt per window      ARGV[2]  the user window, ms
 * ARGV[3]  purchases the sale takes per window          ARGV[4]  the sale window, ms
 *
 * Returns 0 when admitted, else the milliseconds until the refusing window ends (≥ 1). A buyer over
 * their own limit is refused before the sale's counter moves, so one client's flood cannot spend the
 * sale's budget for everyone else.
 */
const PURCHASE_LIMIT_LUA = `
local userKey = KEYS[1]
local saleKey = KEYS[2]
local userLimit, userWindowMs = tonumber(ARGV[1]), tonumber(ARGV[2])
local saleLimit, saleWindowMs = tonumber(ARGV[3]), tonumber(ARGV[4])

local userCount = redis.call('INCR', userKey)
if userCount == 1 then redis.call('PEXPIRE', userKey, userWindowMs) end
if userCount > userLimit then
  local wait = redis.call('PTTL', userKey)
  if wait < 0 then redis.call('PEXPIRE', userKey, userWindowMs); wait = userWindowMs end
  return wait
end

local saleCount = redis.call('INCR', saleKey)
if saleCount == 1 then redis.call('PEXPIRE', saleKey, saleWindowMs) end
if saleCount > saleLimit then
  local wait = redis.call('PTTL', saleKey)
  if wait < 0 then redis.call('PEXPIRE', saleKey, saleWindowMs); wait = saleWindowMs end
  return wait
end
return 0
`;

type LimitedClient = {
  fsPurchaseLimit(
    userKey: string,
    saleKey: string,
    userLimit: number,
    userWindowMs: number,
    saleLimit: number,
    saleWindowMs: number,
  ): Promise<number>;
};

/**
 * The purchase route's rate limits: per user (per sale) and per sale, in one Redis round trip — one
 * EVALSHA on two keys that share the sale's hash tag `{sale:<id>}`, so the script is single-slot in a
 * Redis Cluster and lives beside the sale's own keys. The purchase path is benchmarked: two
 * rate-limiter-flexible calls (its one-key script each) cost twice the Redis time and let a refused
 * flood spend the sale's budget; this small script does neither. Sign-in and token limits, which are
 * not hot, use rate-limiter-flexible (rate-limits.ts).
 */
@Injectable()
export class PurchaseRateLimit {
  private readonly logger = new Logger(PurchaseRateLimit.name);
  private readonly scripted: LimitedClient;
  private readonly args: [number, number, number, number];

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(REDIS_CLIENT) private readonly redis: RedisClient,
  ) {
    redis.defineCommand('fsPurchaseLimit', { numberOfKeys: 2, lua: PURCHASE_LIMIT_LUA });
    this.scripted = redis as unknown as LimitedClient;
    const { purchasesPerUser, purchasesPerSale } = config.protection.limits;
    this.args = [
      purchasesPerUser.points,
      purchasesPerUser.durationSeconds * 1000,
      purchasesPerSale.points,
      purchasesPerSale.durationSeconds * 1000,
    ];
  }

  /** Spends one purchase of `userId` on `saleId` (and of the sale), or throws `429` with the wait. */
  async consume(saleId: string, userId: string): Promise<void> {
    // Redis down: the purchase goes to the MySQL fallback (or 503) on its own; the limits cannot be
    // counted and must not add a wait for a reconnect that is not coming.
    if (this.redis.status !== 'ready') return;
    const prefix = `${this.config.redis.keyPrefix}:{sale:${saleId}}:rl`;
    let waitMs: number;
    try {
      waitMs = Number(
        await this.scripted.fsPurchaseLimit(
          `${prefix}:purchase-user:${userId}`,
          `${prefix}:purchase-sale`,
          ...this.args,
        ),
      );
    } catch (error) {
      this.logger.warn(`Purchase limits unavailable: ${error instanceof Error ? error.message : error}`);
      return;
    }
    if (waitMs > 0) throw rateLimited(waitMs);
  }
}
