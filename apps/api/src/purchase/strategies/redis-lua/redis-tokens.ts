import { type AppConfig, InjectAppConfig } from '@flash-sale/config';
import type { SaleLayout } from '@flash-sale/domain';
import { buyerBucket, RedisConnection, SaleState } from '@flash-sale/redis';
import { Injectable, Logger } from '@nestjs/common';
import { SubmitTokenCodec } from '../../submit-token-codec';
import { RedisBuyers } from './redis-buyers';

/**
 * A redis-lua sale's submit tokens in Redis, where the reservation script checks and consumes them
 * atomically with the purchase. Before Redis holds a token, MySQL records that Redis may sell to its
 * buyer (RedisBuyers), which is what keeps the Redis-down fallback from selling to them a second time.
 */
@Injectable()
export class RedisTokens {
  private readonly logger = new Logger(RedisTokens.name);

  constructor(
    private readonly saleRedis: SaleState,
    private readonly redisBuyers: RedisBuyers,
    private readonly redis: RedisConnection,
    @InjectAppConfig() private readonly config: AppConfig,
  ) {}

  /**
   * A token just signed for this buyer. While Redis cannot be reached (with the fallback on) it stays
   * only signed: Redis never held it, so the fallback may sell with it, and once Redis is back it is
   * adopted there (`adopt`).
   */
  async store(sale: SaleLayout, userId: string, token: string, ttlSeconds: number): Promise<void> {
    if (this.config.purchase.redisFallback && !this.redis.isReady) return;
    await this.redisBuyers.mark(sale.id, userId);
    try {
      await this.saleRedis.storeToken(buyerBucket(sale, userId), token, userId, ttlSeconds);
    } catch (error) {
      if (!this.config.purchase.redisFallback) throw error;
      // The buyer is marked for Redis, so the fallback will ask them to retry; the signed token is
      // still theirs, adopted into Redis once it is back.
      this.logger.warn(`Redis unavailable while issuing a token for sale ${sale.id}`);
    }
  }

  /**
   * Puts a validly signed token that Redis does not know into Redis — one issued while Redis was down,
   * or one a Redis restarted without its data forgot — so the reservation script can check and
   * consume it like any other. The caller has made sure MySQL has no order with it; a token already
   * there (or consumed: its replay is recorded) is left alone.
   */
  async adopt(token: string, sale: SaleLayout, userId: string): Promise<void> {
    const claims = SubmitTokenCodec.decode(token);
    const ttlMs = (claims?.e ?? 0) - Date.now();
    if (ttlMs <= 0) return;
    await this.redisBuyers.mark(sale.id, userId);
    await this.saleRedis.storeTokenIfAbsent(buyerBucket(sale, userId), token, userId, Math.ceil(ttlMs / 1000));
  }
}
