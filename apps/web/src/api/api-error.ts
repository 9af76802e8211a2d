import { ErrorCode } from '@flash-sale/contract';

/**
 * A refusal from the API, `{"error": {"code", "message"}}` of docs/api.md, or a failure to reach it
 * (status 0, code UNAVAILABLE). Components read `code`, never the server's message text.
 */
export class ApiError extends Error {
  override name = 'ApiError';

  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** Seconds, from `retry-after` on a 429. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }

  static unreachable(cause: unknown): ApiError {
    const detail = cause instanceof Error ? cause.message : String(cause);
    return new ApiError(0, ErrorCode.Unavailable, `The shop could not be reached (${detail})`);
  }
}

export function isApiError(error: unknown, code?: ErrorCode): error is ApiError {
  return error instanceof ApiError && (code === undefined || error.code === code);
}
