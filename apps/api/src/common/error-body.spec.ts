import { OptimisticLockExhaustedError } from '@flash-sale/db';
import { ErrorCode } from '@flash-sale/domain';
import { RedisReplyLostError } from '@flash-sale/redis';
import { QueryFailedError } from 'typeorm';
import { isDependencyDown, toErrorResponse } from './error-body';

const withCode = (code: string): Error => Object.assign(new Error(`${code}: from the driver`), { code });

describe('isDependencyDown', () => {
  it('MySQL unreachable, directly or through TypeORM', () => {
    expect(isDependencyDown(withCode('PROTOCOL_CONNECTION_LOST'))).toBe(true);
    expect(isDependencyDown(new QueryFailedError('SELECT 1', [], withCode('ECONNRESET')))).toBe(true);
  });

  it('Redis unreachable', () => {
    expect(isDependencyDown(new RedisReplyLostError())).toBe(true);
    expect(isDependencyDown(new Error('Connection is closed.'))).toBe(true);
  });

  it('not a MySQL error about the query, nor any other error', () => {
    expect(isDependencyDown(withCode('ER_DUP_ENTRY'))).toBe(false);
    expect(isDependencyDown(new Error('boom'))).toBe(false);
    expect(isDependencyDown(null)).toBe(false);
  });
});

describe('toErrorResponse', () => {
  it.each([
    {
      when: 'a dependency that is down: 503 UNAVAILABLE, retry after a second',
      error: withCode('ECONNREFUSED'),
      response: {
        status: 503,
        body: { error: { code: ErrorCode.Unavailable, message: 'A dependency is unavailable; please retry' } },
        unexpected: true,
        retryAfter: 1,
      },
    },
    {
      when: 'optimistic-lock retries exhausted: 503 UNAVAILABLE + retry-after, an expected outcome',
      error: new OptimisticLockExhaustedError('gave up'),
      response: {
        status: 503,
        body: { error: { code: ErrorCode.Unavailable, message: 'Too busy right now; please retry' } },
        unexpected: false,
        retryAfter: 1,
      },
    },
    {
      when: 'anything else: a bare 500 INTERNAL',
      error: new Error('secret detail'),
      response: {
        status: 500,
        body: { error: { code: ErrorCode.Internal, message: 'Internal error' } },
        unexpected: true,
      },
    },
  ])('$when', ({ error, response }) => {
    expect(toErrorResponse(error)).toEqual(response);
  });
});
