import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { encodeTime, ulid } from 'ulid';

/**
 * What a submit token says. Short names: the token travels in every purchase request.
 */
export interface SubmitTokenClaims {
  /** sale id */ s: string;
  /** user id */ u: string;
  /** expiry, epoch ms */ e: number;
  /**
   * The random part of the order number a purchase with this token takes (16 Crockford base32 digits,
   * 80 bits), drawn when the token is signed; it also makes every token distinct.
   */
  o?: string;
  /** The nonce of a token signed before `o` existed: its order number is derived from the whole token. */
  n?: string;
}

/** What `o` must look like: ULID's random part. */
const ORDER_NUMBER_RANDOM_PART = /^[0-9A-HJKMNP-TV-Z]{16}$/;
/** ULID's time part: 48 bits of epoch ms. */
const MAX_ULID_TIME = 2 ** 48 - 1;

/**
 * The format of submit tokens, and nothing else (no Nest, no Redis), so that whoever needs to make or
 * read one — the API's `SubmitTokens`, the benchmark preparing its buyers — does it the same way:
 * `base64url(JSON claims) "." base64url(HMAC-SHA256(key, that first part))`.
 *
 * The key is derived from the JWT secret, so a deployment has no second secret to manage; the
 * `submit-token:` prefix keeps it distinct from the key that signs JWTs.
 */
export class SubmitTokenCodec {
  private readonly key: Buffer;

  constructor(jwtSecret: string) {
    this.key = createHash('sha256').update(`submit-token:${jwtSecret}`).digest();
  }

  /** Fresh claims for (sale, user) until `expiresAtMs`, with the random part of its order number. */
  static claims(saleId: string, userId: string, expiresAtMs: number): SubmitTokenClaims {
    return { s: saleId, u: userId, e: expiresAtMs, o: ulid().slice(10) };
  }

  /** The claims of a token, without checking its signature: trust them only after `verify`. */
  static decode(token: string): SubmitTokenClaims | undefined {
    try {
      return JSON.parse(Buffer.from(token.split('.')[0] ?? '', 'base64url').toString()) as SubmitTokenClaims;
    } catch {
      return undefined;
    }
  }

  encode(claims: SubmitTokenClaims): string {
    const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
    return `${payload}.${this.signature(payload)}`;
  }

  /** True when the token was signed with our key, for this sale and user, and has not expired. */
  verify(token: string, saleId: string, userId: string, now = Date.now()): boolean {
    return this.signedFor(token, saleId, userId) && SubmitTokenCodec.decode(token)!.e > now;
  }

  /**
   * True when the token was signed with our key for this sale and user, expired or not: a token that
   * bought is answered by its order whenever it is sent again (the purchase rules' replay), so its
   * expiry only matters to a token that has not bought.
   */
  signedFor(token: string, saleId: string, userId: string): boolean {
    const [payload, signature, extra] = token.split('.');
    if (!payload || !signature || extra !== undefined) return false;
    const expected = Buffer.from(this.signature(payload));
    const given = Buffer.from(signature);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return false;
    const claims = SubmitTokenCodec.decode(token);
    return claims !== undefined && claims.s === saleId && claims.u === userId;
  }

  /**
   * The order number a reservation made with this token takes: `S<sale>-` and a ULID whose time is the
   * token's expiry and whose 80 random bits are the token's `o`, drawn when it was signed. One token,
   * one number, on every API process and in every incarnation of the sale: a reservation Redis lost (it
   * came back from an older copy) is made again under the number its buyer was promised when the token
   * is sent again. The number is as unguessable as the token that carries it, and costs a purchase no
   * HMAC. Only a token signed before `o` existed (or a forged one, which Redis refuses before its number
   * is used) has its number derived as it was then: the first 80 bits of an HMAC of the token.
   */
  orderNumberOf(token: string, saleId: string): string {
    const claims = SubmitTokenCodec.decode(token);
    const expiresAtMs = claims?.e;
    const time =
      Number.isSafeInteger(expiresAtMs) && expiresAtMs! > 0 && expiresAtMs! <= MAX_ULID_TIME ? expiresAtMs! : 0;
    const carried = claims?.o;
    if (typeof carried === 'string' && ORDER_NUMBER_RANDOM_PART.test(carried)) {
      return `S${saleId}-${encodeTime(time, 10)}${carried}`;
    }
    const mac = createHmac('sha256', this.key).update(`order-number:${token}`).digest();
    return `S${saleId}-${crockford(BigInt(time), 10)}${crockford(BigInt(`0x${mac.subarray(0, 10).toString('hex')}`), 16)}`;
  }

  private signature(payload: string): string {
    return createHmac('sha256', this.key).update(payload).digest('base64url');
  }
}

const CROCKFORD_BASE32 = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** `value` as `length` Crockford base32 digits, most significant first (ULID's alphabet). */
function crockford(value: bigint, length: number): string {
  let digits = '';
  for (let i = 0; i < length; i++) {
    digits = CROCKFORD_BASE32[Number(value & 31n)]! + digits;
    value >>= 5n;
  }
  return digits;
}
