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
  /**
   * 1 when issued while Redis was unreachable: Redis never had it, so it cannot have been consumed
   * there, and the Redis-down fallback may sell with it.
   */
  f?: 1;
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

  /**
   * `storeInRedis`: the sale sells through Redis. If Redis cannot be reached the token is marked as
   * issued without Redis, which makes it usable by the fallback (and, once Redis is back, on Redis).
   */
  async issue(saleId: string, userId: string, storeInRedis: boolean): Promise<IssuedSubmitToken> {
    const ttlSeconds = this.config.purchase.submitTokenTtlSeconds;
    const expiresAt = new Date(Date.now() + ttlSeconds * 1000);
    const claims: TokenClaims = {
      s: saleId,
      u: userId,
      e: expiresAt.getTime(),
      n: randomBytes(9).toString('base64url'),
    };
    if (!storeInRedis) return { token: this.signed(claims), expiresAt };
    const token = this.signed(claims);
    try {
      await this.saleRedis.storeToken(saleId, token, userId, ttlSeconds);
      return { token, expiresAt };
    } catch (error) {
      if (!this.config.purchase.redisFallback) throw error;
      this.logger.warn(`Redis unavailable while issuing a token for sale ${saleId}; it will be usable by the fallback`);
      return { token: this.signed({ ...claims, f: 1 }), expiresAt };
    }
  }

  /**
   * Puts a token issued while Redis was down into Redis, so the reservation script can check and
   * consume it like any other; a token already there (or consumed: its replay is recorded) is left alone.
   */
  async adoptIntoRedis(token: string, saleId: string, userId: string): Promise<void> {
    const claims = this.claims(token);
    const ttlMs = (claims?.e ?? 0) - Date.now();
    if (ttlMs > 0) await this.saleRedis.storeTokenIfAbsent(saleId, token, userId, Math.ceil(ttlMs / 1000));
  }

  /** True for a valid token that was issued while Redis was unreachable (see TokenClaims.f). */
  issuedWithoutRedis(token: string): boolean {
    return this.claims(token)?.f === 1;
  }

  /** True when the token was issued by us, for this sale and user, and has not expired. */
  verify(token: string, saleId: string, userId: string, now = Date.now()): boolean {
    const [payload, signature, extra] = token.split('.');
    if (!payload || !signature || extra !== undefined) return false;
    const expected = Buffer.from(this.sign(payload));
    const given = Buffer.from(signature);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return false;
    const claims = this.claims(token);
    return claims !== undefined && claims.s === saleId && claims.u === userId && claims.e > now;
  }

  /** The claims of a token; call only after `verify` said it is ours. */
  private claims(token: string): TokenClaims | undefined {
    try {
      return JSON.parse(Buffer.from(token.split('.')[0] ?? '', 'base64url').toString()) as TokenClaims;
    } catch {
      return undefined;
    }
  }

  private signed(claims: TokenClaims): string {
    const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
    return `${payload}.${this.sign(payload)}`;
  }

  private sign(payload: string): string {
    return createHmac('sha256', this.key).update(payload).digest('base64url');
  }
}
