import { createHmac, timingSafeEqual } from 'node:crypto';

/** Header carrying `sha256=<hex HMAC of the raw body>`, as payment providers sign their callbacks. */
export const PAYMENT_SIGNATURE_HEADER = 'x-payment-signature';

export function signPaymentBody(rawBody: string, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(rawBody).digest('hex')}`;
}

/** Constant-time check of a callback's signature against its exact raw bytes. */
export function isValidPaymentSignature(rawBody: string, signature: string | undefined, secret: string): boolean {
  if (!signature) return false;
  const expected = Buffer.from(signPaymentBody(rawBody, secret));
  const given = Buffer.from(signature);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
