import { type AppConfig, InjectAppConfig } from '@flash-sale/config';
import type { SaleLayout } from '@flash-sale/domain';
import { buyerBucket, RedisConnection, SaleRedisRepository } from '@flash-sale/redis';
import { Injectable, Logger } from '@nestjs/common';
import { RedisBuyers } from './redis-buyers';
import { SubmitTokenCodec } from './submit-token-codec';

export interface IssuedSubmitToken {
  token: string;
  expiresAt: Date;
}

/**
 * Submit tokens: single use, bound to (user, sale), short-lived.
 *
 * Each token is signed (HMAC) with its sale, user and expiry, and also stored in Redis. The Redis
 * copy is what the reservation script checks and consumes, atomically with the purchase. The
 * signature lets the MySQL-only paths — the db-* strategies, and a Redis-backed sale selling through
 * the fallback while Redis is down — check a token without Redis; there the order's unique
 * `submit_token` makes it single-use. Before Redis holds a token, MySQL records that Redis may sell
 * to its buyer (RedisBuyers), which is what keeps the fallback from selling to them a second time.
 */
@Injectable()
export class SubmitTokens {
  private readonly logger = new Logger(SubmitTokens.name);
  private readonly codec: SubmitTokenCodec;

  constructor(
    private readonly saleRedis: SaleRedisRepository,
    private readonly redisBuyers: RedisBuyers,
    private readonly redis: RedisConnection,
    @InjectAppConfig() private readonly config: AppConfig,
  ) {
    this.codec = new SubmitTokenCodec(config.auth.jwtSecret);
  }

  /**
   * `storeInRedis`: the sale sells through Redis. While Redis cannot be reached (with the fallback on)
   * the token is only signed: Redis never held it, so the fallback may sell with it, and once Redis is
   * back it is adopted there (`adoptIntoRedis`).
   */
  async issue(sale: SaleLayout, userId: string, storeInRedis: boolean): Promise<IssuedSubmitToken> {
    const saleId = sale.id;
    const ttlSeconds = this.config.purchase.submitTokenTtlSeconds;
    const expiresAt = new Date(Date.now() + ttlSeconds * 1000);
    const token = this.codec.encode(SubmitTokenCodec.claims(saleId, userId, expiresAt.getTime()));
    if (!storeInRedis || (this.config.purchase.redisFallback && !this.redis.isReady)) return { token, expiresAt };
    await this.redisBuyers.mark(saleId, userId);
    try {
      await this.saleRedis.storeToken(buyerBucket(sale, userId), token, userId, ttlSeconds);
    } catch (error) {
      if (!this.config.purchase.redisFallback) throw error;
      // The buyer is marked for Redis, so the fallback will ask them to retry; the signed token is
      // still theirs, adopted into Redis once it is back.
      this.logger.warn(`Redis unavailable while issuing a token for sale ${saleId}`);
    }
    return { token, expiresAt };
  }

  /**
   * Puts a validly signed token that Redis does not know into Redis — one issued while Redis was down,
   * or one a Redis restarted without its data forgot — so the reservation script can check and
   * consume it like any other. The caller has made sure MySQL has no order with it; a token already
   * there (or consumed: its replay is recorded) is left alone.
   */
  async adoptIntoRedis(token: string, sale: SaleLayout, userId: string): Promise<void> {
    const claims = SubmitTokenCodec.decode(token);
    const ttlMs = (claims?.e ?? 0) - Date.now();
    if (ttlMs <= 0) return;
    await this.redisBuyers.mark(sale.id, userId);
    await this.saleRedis.storeTokenIfAbsent(buyerBucket(sale, userId), token, userId, Math.ceil(ttlMs / 1000));
  }

  /** True when the token was issued by us, for this sale and user, and has not expired. */
  /** The order number this token's reservation takes (SubmitTokenCodec.orderNumberOf). */
  orderNumberOf(token: string, saleId: string): string {
    return this.codec.orderNumberOf(token, saleId);
  }

  /** Signed for this sale and user, expired or not (SubmitTokenCodec.signedFor). */
  signedFor(token: string, saleId: string, userId: string): boolean {
    return this.codec.signedFor(token, saleId, userId);
  }

  verify(token: string, saleId: string, userId: string, now = Date.now()): boolean {
    return this.codec.verify(token, saleId, userId, now);
  }
}
