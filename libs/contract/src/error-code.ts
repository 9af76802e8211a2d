/**
 * Stable error codes of the HTTP contract (docs/api.md). Clients branch on these, never on messages; the
 * API maps each code to its HTTP status in one table (apps/api/src/common/error-status.ts).
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
  /** A sale with a waiting room issues submit tokens only against a valid admission pass. */
  AdmissionRequired = 'ADMISSION_REQUIRED',
  /** The queue routes of a sale created without `waitingRoom`. */
  NoWaitingRoom = 'NO_WAITING_ROOM',
  OrderNotFound = 'ORDER_NOT_FOUND',
  InvalidTransition = 'INVALID_TRANSITION',
  RateLimited = 'RATE_LIMITED',
  Unavailable = 'UNAVAILABLE',
  Internal = 'INTERNAL',
}

/** The body of every error answer: never a stack trace. */
export interface ErrorBody {
  error: { code: ErrorCode; message: string; details?: unknown };
}
