import { ErrorCode } from '@flash-sale/contract';
import { ApiError } from './api-error';
import { errorMessage } from './error-messages';

describe('errorMessage', () => {
  it('words every purchase refusal of docs/api.md for a shopper', () => {
    expect(errorMessage(new ApiError(410, ErrorCode.SoldOut, 'x'))).toMatch(/sold out/i);
    expect(errorMessage(new ApiError(409, ErrorCode.LimitReached, 'x'))).toMatch(/as many as one customer may buy/i);
    expect(errorMessage(new ApiError(409, ErrorCode.SaleNotStarted, 'x'))).toMatch(/not started/i);
    expect(errorMessage(new ApiError(410, ErrorCode.SaleEnded, 'x'))).toMatch(/ended/i);
    expect(errorMessage(new ApiError(503, ErrorCode.Unavailable, 'x'))).toMatch(/unavailable/i);
  });

  it("words the waiting room's refusals", () => {
    expect(errorMessage(new ApiError(403, ErrorCode.AdmissionRequired, 'x'))).toBe(
      'Your turn to buy has not come yet, or it ran out. Wait for your turn in the line.',
    );
    expect(errorMessage(new ApiError(409, ErrorCode.NoWaitingRoom, 'x'))).toBe(
      'This sale has no waiting room (any more).',
    );
  });

  it('tells how long to wait when the API is rate limiting', () => {
    expect(errorMessage(new ApiError(429, ErrorCode.RateLimited, 'x', 3))).toBe(
      'Too many requests right now. Please wait 3 s and try again.',
    );
  });

  it("falls back to the server's message for a code it does not know", () => {
    expect(errorMessage(new ApiError(418, 'TEAPOT', 'I am a teapot'))).toBe('I am a teapot');
  });
});

describe('errorMessage for a validation failure', () => {
  it("adds the server's account of which field is wrong", () => {
    expect(errorMessage(new ApiError(400, ErrorCode.ValidationFailed, 'stock must not be greater than 10000000'))).toBe(
      'Some of the details are not valid. stock must not be greater than 10000000',
    );
  });
});
