import { type AppConfig, InjectAppConfig } from '@flash-sale/config';
import { SaleRedisRepository } from '@flash-sale/redis';
import { Injectable, Logger } from '@nestjs/common';
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
 * `submit_token` makes it single-use.
 */
@Injectable()
export class SubmitTokens {
  private readonly logger = new Logger(SubmitTokens.name);
  private readonly codec: SubmitTokenCodec;

  constructor(
    private readonly saleRedis: SaleRedisRepository,
    @InjectAppConfig() private readonly config: AppConfig,
  ) {
    this.codec = new SubmitTokenCodec(config.auth.jwtSecret);
  }

  /**
   * `storeInRedis`: the sale sells through Redis. If Redis cannot be reached the token is marked as
   * issued without Redis, which makes it usable by the fallback (and, once Redis is back, on Redis).
   */
  async issue(saleId: string, userId: string, storeInRedis: boolean): Promise<IssuedSubmitToken> {
    const ttlSeconds = this.config.purchase.submitTokenTtlSeconds;
    const expiresAt = new Date(Date.now() + ttlSeconds * 1000);
    const claims = SubmitTokenCodec.claims(saleId, userId, expiresAt.getTime());
    const token = this.codec.encode(claims);
    if (!storeInRedis) return { token, expiresAt };
    try {
      await this.saleRedis.storeToken(saleId, token, userId, ttlSeconds);
      return { token, expiresAt };
    } catch (error) {
      if (!this.config.purchase.redisFallback) throw error;
      this.logger.warn(`Redis unavailable while issuing a token for sale ${saleId}; it will be usable by the fallback`);
      return { token: this.codec.encode({ ...claims, f: 1 }), expiresAt };
    }
  }

  /**
   * Puts a token issued while Redis was down into Redis, so the reservation script can check and
   * consume it like any other; a token already there (or consumed: its replay is recorded) is left alone.
   */
  async adoptIntoRedis(token: string, saleId: string, userId: string): Promise<void> {
    const claims = SubmitTokenCodec.decode(token);
    const ttlMs = (claims?.e ?? 0) - Date.now();
    if (ttlMs > 0) await this.saleRedis.storeTokenIfAbsent(saleId, token, userId, Math.ceil(ttlMs / 1000));
  }

  /** True for a valid token that was issued while Redis was unreachable (see SubmitTokenClaims.f). */
  issuedWithoutRedis(token: string): boolean {
    return SubmitTokenCodec.decode(token)?.f === 1;
  }

  /** True when the token was issued by us, for this sale and user, and has not expired. */
  verify(token: string, saleId: string, userId: string, now = Date.now()): boolean {
    return this.codec.verify(token, saleId, userId, now);
  }
}
