import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { AppConfig } from '@flash-sale/config';
import { SaleRedisRepository } from '@flash-sale/redis';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG } from '../infra/tokens';

export interface IssuedSubmitToken {
  token: string;
  expiresAt: Date;
}

interface TokenClaims {
  /** sale id */ s: string;
  /** user id */ u: string;
  /** expiry, epoch ms */ e: number;
  /** nonce: every token is distinct */ n: string;
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
  private readonly key: Buffer;

  constructor(
    private readonly saleRedis: SaleRedisRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.key = createHash('sha256').update(`submit-token:${config.auth.jwtSecret}`).digest();
  }

  /** `storeInRedis`: the sale sells through Redis. If Redis is down the signed token still works for the fallback. */
  async issue(saleId: string, userId: string, storeInRedis: boolean): Promise<IssuedSubmitToken> {
    const ttlSeconds = this.config.purchase.submitTokenTtlSeconds;
    const expiresAt = new Date(Date.now() + ttlSeconds * 1000);
    const claims: TokenClaims = {
      s: saleId,
      u: userId,
      e: expiresAt.getTime(),
      n: randomBytes(9).toString('base64url'),
    };
    const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
    const token = `${payload}.${this.sign(payload)}`;
    if (storeInRedis) {
      try {
        await this.saleRedis.storeToken(saleId, token, userId, ttlSeconds);
      } catch (error) {
        if (!this.config.purchase.redisFallback) throw error;
        this.logger.warn(
          `Redis unavailable while issuing a token for sale ${saleId}; it will be usable by the fallback`,
        );
      }
    }
    return { token, expiresAt };
  }

  /** True when the token was issued by us, for this sale and user, and has not expired. */
  verify(token: string, saleId: string, userId: string, now = Date.now()): boolean {
    const [payload, signature, extra] = token.split('.');
    if (!payload || !signature || extra !== undefined) return false;
    const expected = Buffer.from(this.sign(payload));
    const given = Buffer.from(signature);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return false;
    try {
      const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as TokenClaims;
      return claims.s === saleId && claims.u === userId && claims.e > now;
    } catch {
      return false;
    }
  }

  private sign(payload: string): string {
    return createHmac('sha256', this.key).update(payload).digest('base64url');
  }
}
