import { ErrorCode, RetryLaterError } from '@flash-sale/domain';

export { RetryLaterError };

export function rateLimited(retryAfterMs: number): RetryLaterError {
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return new RetryLaterError(ErrorCode.RateLimited, `Too many requests; retry in ${seconds} s`, seconds);
}

/** `retry-after` for any error that carries one. */
export function retryAfterOf(error: unknown): number | undefined {
  return error instanceof RetryLaterError ? error.retryAfterSeconds : undefined;
}
