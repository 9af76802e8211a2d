import { isMySqlUnavailable, OptimisticLockExhaustedError } from '@flash-sale/db';
import { DomainError, ErrorCode, RetryLaterError } from '@flash-sale/domain';
import { isRedisUnavailable } from '@flash-sale/redis';
import { HttpException, HttpStatus } from '@nestjs/common';
import { ERROR_STATUS } from './error-status';

export interface ErrorBody {
  error: { code: string; message: string; details?: unknown };
}

/** Errors that Fastify itself raises before a route runs (body parsing, size limits). */
interface FastifyError {
  statusCode?: number;
  code?: string;
  message: string;
}

const NEST_STATUS_CODES: Partial<Record<number, ErrorCode>> = {
  [HttpStatus.BAD_REQUEST]: ErrorCode.ValidationFailed,
  [HttpStatus.UNAUTHORIZED]: ErrorCode.Unauthenticated,
  [HttpStatus.FORBIDDEN]: ErrorCode.Forbidden,
  [HttpStatus.NOT_FOUND]: ErrorCode.NotFound,
  [HttpStatus.METHOD_NOT_ALLOWED]: ErrorCode.NotFound,
  [HttpStatus.PAYLOAD_TOO_LARGE]: ErrorCode.ValidationFailed,
  [HttpStatus.UNSUPPORTED_MEDIA_TYPE]: ErrorCode.ValidationFailed,
  [HttpStatus.TOO_MANY_REQUESTS]: ErrorCode.RateLimited,
};

/** Redis or MySQL unreachable or failing over: the caller may retry; nothing says the input was wrong. */
export function isDependencyDown(error: unknown): boolean {
  return isMySqlUnavailable(error) || isRedisUnavailable(error);
}

/** A dependency that is down usually answers again within a moment: the client may retry after this. */
const DEPENDENCY_RETRY_SECONDS = 1;
/** A burst on one row is over within a moment too: a buyer whose optimistic retries ran out tries again after this. */
const CONTENTION_RETRY_SECONDS = 1;

/**
 * Turns anything thrown into the contract's `{error: {code, message}}` and its status. Unknown
 * errors become a bare 500 INTERNAL: never a stack trace on the wire.
 */
export function toErrorResponse(error: unknown): {
  status: number;
  body: ErrorBody;
  unexpected: boolean;
  /** Seconds for the `retry-after` header. */
  retryAfter?: number;
} {
  if (error instanceof DomainError) {
    const body: ErrorBody = { error: { code: error.code, message: error.message } };
    if (error.details !== undefined) body.error.details = error.details;
    const retryAfter = error instanceof RetryLaterError ? error.retryAfterSeconds : undefined;
    return { status: ERROR_STATUS[error.code], body, unexpected: false, retryAfter };
  }
  if (error instanceof HttpException) {
    const status = error.getStatus();
    const code = NEST_STATUS_CODES[status] ?? ErrorCode.Internal;
    return { status, body: { error: { code, message: error.message } }, unexpected: status >= 500 };
  }
  const fastifyError = error as FastifyError | null;
  const status = fastifyError?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    const code = NEST_STATUS_CODES[status] ?? ErrorCode.ValidationFailed;
    return { status, body: { error: { code, message: fastifyError?.message ?? 'Bad request' } }, unexpected: false };
  }
  if (error instanceof OptimisticLockExhaustedError) {
    // Too many concurrent writers on one sale row for the bounded retries: nothing was written, and
    // the same token may be sent again (docs/api.md) once the crowd on the row has thinned.
    return {
      status: HttpStatus.SERVICE_UNAVAILABLE,
      body: { error: { code: ErrorCode.Unavailable, message: 'Too busy right now; please retry' } },
      unexpected: false,
      retryAfter: CONTENTION_RETRY_SECONDS,
    };
  }
  if (isDependencyDown(error)) {
    return {
      status: HttpStatus.SERVICE_UNAVAILABLE,
      body: { error: { code: ErrorCode.Unavailable, message: 'A dependency is unavailable; please retry' } },
      unexpected: true,
      retryAfter: DEPENDENCY_RETRY_SECONDS,
    };
  }
  return {
    status: HttpStatus.INTERNAL_SERVER_ERROR,
    body: { error: { code: ErrorCode.Internal, message: 'Internal error' } },
    unexpected: true,
  };
}
