import { DomainError, ErrorCode } from '@flash-sale/domain';

/**
 * A refusal that means "nothing happened, send the same request again later": `429 RATE_LIMITED` or a
 * load-shedding `503 UNAVAILABLE`. The error filter turns `retryAfterSeconds` into `retry-after`.
 */
export class RetryLaterError extends DomainError {
  constructor(
    code: ErrorCode.RateLimited | ErrorCode.Unavailable,
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(code, message);
    this.name = 'RetryLaterError';
  }
}

export function rateLimited(retryAfterMs: number): RetryLaterError {
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return new RetryLaterError(ErrorCode.RateLimited, `Too many requests; retry in ${seconds} s`, seconds);
}

/** `retry-after` for any error that carries one. */
export function retryAfterOf(error: unknown): number | undefined {
  return error instanceof RetryLaterError ? error.retryAfterSeconds : undefined;
}
