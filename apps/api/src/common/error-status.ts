import { ErrorCode } from '@flash-sale/domain';
import { HttpStatus } from '@nestjs/common';

/** The one table from error code to HTTP status (docs/api.md). */
export const ERROR_STATUS: Readonly<Record<ErrorCode, HttpStatus>> = {
  [ErrorCode.ValidationFailed]: HttpStatus.BAD_REQUEST,
  [ErrorCode.Unauthenticated]: HttpStatus.UNAUTHORIZED,
  [ErrorCode.InvalidCredentials]: HttpStatus.UNAUTHORIZED,
  [ErrorCode.NameTaken]: HttpStatus.CONFLICT,
  [ErrorCode.InvalidSignature]: HttpStatus.UNAUTHORIZED,
  [ErrorCode.Forbidden]: HttpStatus.FORBIDDEN,
  [ErrorCode.NotFound]: HttpStatus.NOT_FOUND,
  [ErrorCode.SaleNotFound]: HttpStatus.NOT_FOUND,
  [ErrorCode.SaleNotStarted]: HttpStatus.CONFLICT,
  [ErrorCode.SaleEnded]: HttpStatus.GONE,
  [ErrorCode.TokenInvalid]: HttpStatus.FORBIDDEN,
  [ErrorCode.LimitReached]: HttpStatus.CONFLICT,
  [ErrorCode.SoldOut]: HttpStatus.GONE,
  [ErrorCode.AdmissionRequired]: HttpStatus.FORBIDDEN,
  [ErrorCode.NoWaitingRoom]: HttpStatus.CONFLICT,
  [ErrorCode.OrderNotFound]: HttpStatus.NOT_FOUND,
  [ErrorCode.InvalidTransition]: HttpStatus.CONFLICT,
  [ErrorCode.RateLimited]: HttpStatus.TOO_MANY_REQUESTS,
  [ErrorCode.Unavailable]: HttpStatus.SERVICE_UNAVAILABLE,
  [ErrorCode.Internal]: HttpStatus.INTERNAL_SERVER_ERROR,
};
