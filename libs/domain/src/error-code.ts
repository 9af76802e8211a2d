/**
 * Stable error codes of the HTTP contract (API.md). The domain knows codes, not HTTP statuses:
 * the API maps each code to its status in exactly one table (apps/api/src/common/error-status.ts).
 */
export enum ErrorCode {
  ValidationFailed = 'VALIDATION_FAILED',
  Unauthenticated = 'UNAUTHENTICATED',
  InvalidCredentials = 'INVALID_CREDENTIALS',
  NameTaken = 'NAME_TAKEN',
  InvalidSignature = 'INVALID_SIGNATURE',
  Forbidden = 'FORBIDDEN',
  NotFound = 'NOT_FOUND',
  SaleNotFound = 'SALE_NOT_FOUND',
  SaleNotStarted = 'SALE_NOT_STARTED',
  SaleEnded = 'SALE_ENDED',
  TokenInvalid = 'TOKEN_INVALID',
  LimitReached = 'LIMIT_REACHED',
  SoldOut = 'SOLD_OUT',
  OrderNotFound = 'ORDER_NOT_FOUND',
  InvalidTransition = 'INVALID_TRANSITION',
  RateLimited = 'RATE_LIMITED',
  Unavailable = 'UNAVAILABLE',
  Internal = 'INTERNAL',
}

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
