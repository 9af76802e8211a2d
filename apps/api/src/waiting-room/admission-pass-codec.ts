import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The format of admission passes (docs/api.md "The waiting room"), and nothing else:
 * `<expiry, epoch ms> "." base64url(HMAC-SHA256(key, "<sale>|<user>|<expiry>"))`. A pass is bound to
 * its buyer and sale by the signature alone and stored nowhere: any API instance checks it without
 * Redis, and a pass issued before Redis lost the room stays valid until it expires.
 *
 * The key is derived from the JWT secret (no second secret to manage); the `admission-pass:` prefix
 * keeps it distinct from the keys that sign JWTs and submit tokens.
 */
export class AdmissionPassCodec {
  private readonly key: Buffer;

  constructor(jwtSecret: string) {
    this.key = createHash('sha256').update(`admission-pass:${jwtSecret}`).digest();
  }

  issue(saleId: string, userId: string, expiresAtMs: number): string {
    return `${expiresAtMs}.${this.signature(saleId, userId, expiresAtMs)}`;
  }

  /** True when the pass was signed by us for this sale and buyer and has not expired. */
  verify(pass: unknown, saleId: string, userId: string, now = Date.now()): boolean {
    if (typeof pass !== 'string' || pass.length > 100) return false;
    const [expiry, signature, extra] = pass.split('.');
    if (!expiry || !signature || extra !== undefined || !/^[0-9]{1,15}$/.test(expiry)) return false;
    const expiresAtMs = Number(expiry);
    if (expiresAtMs <= now) return false;
    const expected = Buffer.from(this.signature(saleId, userId, expiresAtMs));
    const given = Buffer.from(signature);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  private signature(saleId: string, userId: string, expiresAtMs: number): string {
    return createHmac('sha256', this.key).update(`${saleId}|${userId}|${expiresAtMs}`).digest('base64url');
  }
}
