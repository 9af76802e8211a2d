import { type AppConfig, InjectAppConfig } from '@flash-sale/config';
import { Injectable } from '@nestjs/common';
import { SubmitTokenCodec } from './submit-token-codec';

export interface IssuedSubmitToken {
  token: string;
  expiresAt: Date;
}

/**
 * Submit tokens: single use, bound to (user, sale), short-lived. Each is signed (HMAC) with its sale,
 * user and expiry, which lets every strategy check a token without asking anyone; what makes it single
 * use is the strategy's (MySQL's unique `submit_token` on orders, or redis-lua's copy in Redis that the
 * reservation script consumes with the purchase).
 */
@Injectable()
export class SubmitTokens {
  private readonly codec: SubmitTokenCodec;

  constructor(@InjectAppConfig() private readonly config: AppConfig) {
    this.codec = new SubmitTokenCodec(config.auth.jwtSecret);
  }

  get ttlSeconds(): number {
    return this.config.purchase.submitTokenTtlSeconds;
  }

  sign(saleId: string, userId: string): IssuedSubmitToken {
    const expiresAt = new Date(Date.now() + this.ttlSeconds * 1000);
    return { token: this.codec.encode(SubmitTokenCodec.claims(saleId, userId, expiresAt.getTime())), expiresAt };
  }

  /** The order number this token's reservation takes (SubmitTokenCodec.orderNumberOf). */
  orderNumberOf(token: string, saleId: string): string {
    return this.codec.orderNumberOf(token, saleId);
  }

  /**
   * When the token was issued (ms, by the clock of the process that signed it): its expiry less the TTL.
   * Trust it only for a token `signedFor` the buyer.
   */
  issuedAtMs(token: string): number {
    return (SubmitTokenCodec.decode(token)?.e ?? 0) - this.ttlSeconds * 1000;
  }

  /** Signed for this sale and user, expired or not (SubmitTokenCodec.signedFor). */
  signedFor(token: string, saleId: string, userId: string): boolean {
    return this.codec.signedFor(token, saleId, userId);
  }

  /** True when the token was issued by us, for this sale and user, and has not expired. */
  verify(token: string, saleId: string, userId: string, now = Date.now()): boolean {
    return this.codec.verify(token, saleId, userId, now);
  }
}
