import { DomainError, ErrorCode, purchaseRefusalMessage, RetryLaterError } from '@flash-sale/domain';

/** One error per refusal code, made once: see `refusal`. */
const refusals = new Map<ErrorCode, DomainError>();

/**
 * The error for a refusal of the purchase rules — sold out, limit reached, bad submit token: the
 * everyday answers of a flash sale, not faults. Each is an immutable value (class, code, message), so
 * one instance per code is made once and thrown every time: no stack trace is captured per request
 * (nothing reads it — the error filter logs stacks of unexpected errors only — and capturing one on
 * every sold-out request is measurable).
 */
export function refusal(code: ErrorCode): DomainError {
  let error = refusals.get(code);
  if (!error) {
    error = new DomainError(code, purchaseRefusalMessage(code));
    refusals.set(code, error);
  }
  return error;
}

/** What a buyer is told when the answer cannot be given safely now but can be in a moment. */
const RETRY_SECONDS = 1;

/** `503` + `retry-after`: nothing happened, and the same submit token gets its true answer shortly. */
export function retryLater(message: string): RetryLaterError {
  return new RetryLaterError(ErrorCode.Unavailable, message, RETRY_SECONDS);
}
