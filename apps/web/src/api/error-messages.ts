import { ErrorCode } from '@flash-sale/contract';
import { ApiError } from './api-error';

/**
 * What a shopper reads for each refusal of docs/api.md. One table, so the storefront says the same thing
 * for the same code everywhere; the server's own message is only a fallback for codes not listed.
 */
const MESSAGES: Partial<Record<ErrorCode, string>> = {
  [ErrorCode.SoldOut]: 'Sold out — every unit has been claimed.',
  [ErrorCode.LimitReached]: 'You already have as many as one customer may buy in this sale.',
  [ErrorCode.SaleNotStarted]: 'This sale has not started yet. The Buy button opens when the countdown ends.',
  [ErrorCode.SaleEnded]: 'This sale has ended.',
  [ErrorCode.RateLimited]: 'Too many requests right now.',
  [ErrorCode.Unavailable]: 'The shop is briefly unavailable. Nothing was charged — please try again in a moment.',
  [ErrorCode.AdmissionRequired]: 'Your turn to buy has not come yet, or it ran out. Wait for your turn in the line.',
  [ErrorCode.NoWaitingRoom]: 'This sale has no waiting room (any more).',
  [ErrorCode.TokenInvalid]: 'Your checkout session expired. Press Buy again to get a fresh one.',
  [ErrorCode.Unauthenticated]: 'Please sign in to continue.',
  [ErrorCode.Forbidden]: 'This needs an administrator account.',
  [ErrorCode.SaleNotFound]: 'This sale does not exist (any more).',
  [ErrorCode.OrderNotFound]: 'We could not find that order.',
  [ErrorCode.InvalidTransition]: 'That is no longer possible for this order — it has moved on.',
  [ErrorCode.InvalidCredentials]: 'That password is not right.',
  [ErrorCode.NameTaken]: 'That name is taken — choose another, or sign in if it is yours.',
  [ErrorCode.ValidationFailed]: 'Some of the details are not valid.',
  [ErrorCode.Internal]: 'Something went wrong on our side. Please try again.',
};

export function errorMessage(error: unknown): string {
  if (error instanceof ApiError) {
    const known = MESSAGES[error.code as ErrorCode];
    if (error.code === ErrorCode.RateLimited && error.retryAfterSeconds) {
      return `${known} Please wait ${error.retryAfterSeconds} s and try again.`;
    }
    // A validation failure's own text says which field and why; that is worth reading.
    if (error.code === ErrorCode.ValidationFailed && error.message !== error.code) return `${known} ${error.message}`;
    return known ?? error.message;
  }
  return MESSAGES[ErrorCode.Internal] as string;
}
