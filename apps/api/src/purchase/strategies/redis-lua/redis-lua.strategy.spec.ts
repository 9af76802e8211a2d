import { DomainError, ErrorCode, type SaleDefinition } from '@flash-sale/domain';
import type { DurableAck } from '../../../durability/durable-ack';
import type { RedisDownFallback } from './redis-down-fallback';
import { RedisLuaStrategy } from './redis-lua.strategy';
import type { RedisReservation } from './redis-reservation';
import type { RedisTokens } from './redis-tokens';
import type { SoldOutFastPath } from './sold-out-fast-path';

const ORDER = { token: 'submit-token-1', quantity: 1 };
const SALE = { id: '7', strategy: 'redis-lua' } as SaleDefinition;
const redisDown = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });

interface Scenario {
  /** The fallback sells instead of Redis from the start (Redis is down, REDIS_FALLBACK on). */
  fallbackFirst?: boolean;
  reservationFails?: unknown;
}

/** The strategy's collaborators as recorders: the test reads the order in which it asked them. */
function strategyOf(scenario: Scenario) {
  const calls: string[] = [];
  const reservation = {
    reserve: async () => {
      calls.push('reserve');
      if (scenario.reservationFails) throw scenario.reservationFails;
      return { orderNo: 'FS-R', status: 'QUEUED' };
    },
  } as unknown as RedisReservation;
  const fallback = {
    takesOver: () => scenario.fallbackFirst ?? false,
    takesOverAfter: (error: unknown) => error === redisDown,
    beforeRedisSells: async () => void calls.push('beforeRedisSells'),
    sell: async () => (calls.push('fallback'), { orderNo: 'FS-F', status: 'PENDING_PAYMENT' }),
  } as unknown as RedisDownFallback;
  const durableAck = { admit: () => void calls.push('admit') } as unknown as DurableAck;
  const strategy = new RedisLuaStrategy(reservation, fallback, {} as RedisTokens, durableAck, {} as SoldOutFastPath);
  return { strategy, calls };
}

describe('RedisLuaStrategy', () => {
  it('reserves in Redis, whose script counts the rate limits', async () => {
    const { strategy, calls } = strategyOf({});
    await expect(strategy.sell(SALE, 'u1', ORDER)).resolves.toEqual({ orderNo: 'FS-R', status: 'QUEUED' });
    expect(calls).toEqual(['beforeRedisSells', 'admit', 'reserve']);
    expect(strategy.countsRateLimits()).toBe(true);
  });

  it('sells through the MySQL fallback while Redis is down, leaving the limits to be spent before', async () => {
    const { strategy, calls } = strategyOf({ fallbackFirst: true });
    expect(strategy.countsRateLimits()).toBe(false);
    await expect(strategy.sell(SALE, 'u1', ORDER)).resolves.toEqual({ orderNo: 'FS-F', status: 'PENDING_PAYMENT' });
    expect(calls).toEqual(['fallback']);
  });

  it('hands a reservation that found Redis down to the fallback, and passes any other failure on', async () => {
    const down = strategyOf({ reservationFails: redisDown });
    await expect(down.strategy.sell(SALE, 'u1', ORDER)).resolves.toMatchObject({ orderNo: 'FS-F' });
    expect(down.calls).toEqual(['beforeRedisSells', 'admit', 'reserve', 'fallback']);

    const refused = new DomainError(ErrorCode.LimitReached, 'limit');
    const other = strategyOf({ reservationFails: refused });
    await expect(other.strategy.sell(SALE, 'u1', ORDER)).rejects.toBe(refused);
    expect(other.calls).not.toContain('fallback');
  });
});
