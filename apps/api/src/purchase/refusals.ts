import { DomainError, type ErrorCode, purchaseRefusalMessage } from '@flash-sale/domain';

/**
 * The error for a refusal of the purchase rules — sold out, limit reached, bad submit token: the
 * everyday answers of a flash sale, not faults. Nothing reads their stack (the error filter logs stacks
 * of unexpected errors only), and capturing one on every sold-out request is measurable, so it is not
 * captured. Everything else about the error (class, code, message) is unchanged.
 */
export function refusal(code: ErrorCode): DomainError {
  const stackTraceLimit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return new DomainError(code, purchaseRefusalMessage(code));
  } finally {
    Error.stackTraceLimit = stackTraceLimit;
  }
}
