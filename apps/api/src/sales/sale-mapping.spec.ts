import { type CreateSaleRequest, SALE_DEFAULTS, SALE_LIMITS, SALE_STRATEGIES } from '@flash-sale/contract';
import { DomainError, ErrorCode, REDIS_BACKED_STRATEGIES, sellsFromRedis } from '@flash-sale/domain';
import { newSaleOf, saleView } from './sale-mapping';

const NOW = new Date('2030-01-01T00:00:00Z');
const REQUEST: CreateSaleRequest = { name: 'Sneakers', priceCents: 4999, stock: 100, endsAt: '2030-01-02T00:00:00Z' };

function refusal(run: () => unknown): string | undefined {
  try {
    run();
    return undefined;
  } catch (error) {
    return error instanceof DomainError ? `${error.code}: ${error.message}` : String(error);
  }
}

describe('newSaleOf (a create request as the new sale)', () => {
  it('fills what the request leaves out from SALE_DEFAULTS, startsAt with now', () => {
    const sale = newSaleOf(REQUEST, 1, NOW);
    expect(sale).toMatchObject({
      ...SALE_DEFAULTS,
      startsAt: NOW,
      description: null,
      imageUrl: null,
      waitingRoom: null,
    });
  });

  it.each(SALE_STRATEGIES)('%s: buckets only where the stock is sold from Redis', (strategy) => {
    const spread = () => newSaleOf({ ...REQUEST, strategy, buckets: 3 }, 1, NOW);
    if (sellsFromRedis(strategy)) {
      expect(spread().buckets).toBe(3);
      expect(newSaleOf({ ...REQUEST, strategy }, 4, NOW).buckets).toBe(4);
      expect(refusal(() => newSaleOf({ ...REQUEST, strategy, buckets: SALE_LIMITS.maxBuckets + 1 }, 1, NOW))).toMatch(
        ErrorCode.ValidationFailed,
      );
    } else {
      expect(refusal(spread)).toBe(
        `${ErrorCode.ValidationFailed}: buckets applies to ${REDIS_BACKED_STRATEGIES.join(', ')} sales only`,
      );
      // One bucket is what every sale has: asking for it is no mistake, and the server's default does not apply.
      expect(newSaleOf({ ...REQUEST, strategy, buckets: 1 }, 4, NOW).buckets).toBe(1);
      expect(newSaleOf({ ...REQUEST, strategy }, 4, NOW).buckets).toBe(1);
    }
  });

  it('refuses a window that ends before it starts', () => {
    expect(refusal(() => newSaleOf({ ...REQUEST, startsAt: REQUEST.endsAt }, 1, NOW))).toBe(
      `${ErrorCode.ValidationFailed}: endsAt must be after startsAt`,
    );
  });
});

describe('saleView (a sale as the routes answer it)', () => {
  it('is the new sale with its id, remaining units and status, times in ISO-8601', () => {
    const sale = { id: '7', ...newSaleOf(REQUEST, 1, NOW) };
    expect(saleView(sale, 40, NOW)).toEqual({
      ...sale,
      startsAt: '2030-01-01T00:00:00.000Z',
      endsAt: '2030-01-02T00:00:00.000Z',
      remaining: 40,
      status: 'live',
    });
    expect(saleView(sale, 0, NOW).status).toBe('sold_out');
  });
});
