import { ErrorCode } from '@flash-sale/contract';

// The codes are the HTTP contract's (libs/contract); the domain raises them without knowing statuses.
export { ErrorCode };

/** A refusal the domain can name. Carries no HTTP knowledge. */
export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

/**
 * A refusal that means "nothing happened, send the same request again later": `429 RATE_LIMITED`, a
 * load-shedding `503`, or a `503` when the answer cannot be given safely right now (an outage). The
 * response carries `retry-after`, and the same submit token may be sent again.
 */
export class RetryLaterError extends DomainError {
  constructor(
    code: ErrorCode,
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(code, message);
    this.name = 'RetryLaterError';
  }
}
