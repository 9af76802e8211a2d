import { DomainError, ErrorCode } from '@flash-sale/domain';

/**
 * The error for a refusal the reservation script answered — sold out, limit reached, bad token: the
 * everyday answers of a flash sale, not faults. Nothing reads their stack (the error filter logs stacks
 * of unexpected errors only), and capturing one on every sold-out request is measurable, so it is not
 * captured. Everything else about the error (class, code, message) is unchanged.
 */
export function refusal(code: ErrorCode): DomainError {
  const stackTraceLimit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return new DomainError(code, REFUSAL_MESSAGES[code] ?? 'Purchase refused');
  } finally {
    Error.stackTraceLimit = stackTraceLimit;
  }
}

const REFUSAL_MESSAGES: Partial<Record<ErrorCode, string>> = {
  [ErrorCode.SaleNotStarted]: 'This sale has not started yet',
  [ErrorCode.SaleEnded]: 'This sale has ended',
  [ErrorCode.TokenInvalid]: 'The submit token is unknown, expired, or not yours for this sale',
  [ErrorCode.LimitReached]: 'You already bought as many as this sale allows per person',
  [ErrorCode.SoldOut]: 'Sold out',
  [ErrorCode.Unavailable]: 'This sale is not loaded; an admin must preload it',
};
