import { ErrorCode, RetryLaterError } from '@flash-sale/domain';

export { RetryLaterError };

export function rateLimited(retryAfterMs: number): RetryLaterError {
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return new RetryLaterError(ErrorCode.RateLimited, `Too many requests; retry in ${seconds} s`, seconds);
}
