import { RateLimiterMemory, RateLimiterRedis } from 'rate-limiter-flexible';
import type { RedisClient } from './redis-client';
import type { KeyBuilder } from './sale-keys';

export interface FixedWindowLimit {
  /** A name unique among the limits: it is part of the counters' keys. */
  name: string;
  points: number;
  durationSeconds: number;
  /** Once spent, the subject is refused this long (0: until the window ends). */
  blockSeconds: number;
}

/**
 * Builds the distributed rate limiters (rate-limiter-flexible) on the shared Redis: one counter key
 * per (limit, subject), incremented with its TTL by one Lua script, so every API instance counts into
 * the same window. While Redis is unreachable each limiter falls back to an in-process counter of the
 * same size, so the limits are neither lifted nor turned into refusals by an outage.
 */
export class RateLimiterStore {
  constructor(
    private readonly client: RedisClient,
    private readonly keys: KeyBuilder,
  ) {}

  limiter({ name, points, durationSeconds, blockSeconds }: FixedWindowLimit): RateLimiterRedis {
    const options = { points, duration: durationSeconds, blockDuration: blockSeconds };
    return new RateLimiterRedis({
      ...options,
      storeClient: this.client,
      keyPrefix: this.keys.rateLimit(name),
      rejectIfRedisNotReady: true,
      insuranceLimiter: new RateLimiterMemory(options),
    });
  }
}
