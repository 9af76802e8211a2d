import { DomainError, ErrorCode, type SaleStrategy, type SaleTerms } from '@flash-sale/domain';
import type { MetricsService } from '../metrics/metrics.service';
import type { PurchaseRateLimits } from '../protection/purchase-rate-limits';
import { rateLimited } from '../protection/retry-later.error';
import type { SaleCatalog } from '../sales/sale-catalog';
import type { DbPurchase } from './db-purchase';
import { PurchaseService } from './purchase.service';
import type { RedisDownFallback } from './redis-down-fallback';
import type { RedisReservation } from './redis-reservation';
import type { WaitingRoom } from '../waiting-room/waiting-room.service';
import type { SubmitTokens } from './submit-tokens';

const ORDER = { token: 'submit-token-1', quantity: 1 };
const saleOf = (strategy: SaleStrategy): SaleTerms => ({
  id: '7',
  priceCents: 100,
  perUserLimit: 2,
  strategy,
  buckets: 1,
  paymentTimeoutSeconds: 60,
  startsAt: new Date(0),
  endsAt: new Date(Date.now() + 3_600_000),
});
const redisDown = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });

interface Scenario {
  sale?: SaleTerms;
  /** The fallback sells instead of Redis from the start (Redis is down, REDIS_FALLBACK on). */
  fallbackFirst?: boolean;
  reservationFails?: unknown;
  limitsRefuse?: boolean;
}

/** The dispatcher's collaborators as recorders: the test reads the order in which it asked them. */
function dispatcher(scenario: Scenario) {
  const calls: string[] = [];
  const catalog = {
    get: async (saleId: string) => {
      if (!scenario.sale) throw new DomainError(ErrorCode.SaleNotFound, `No sale with id ${saleId}`);
      return scenario.sale;
    },
  } as unknown as SaleCatalog;
  const limits = {
    spendNow: async (sale: SaleTerms | string) => {
      calls.push(`limits ${typeof sale === 'string' ? sale : sale.id}`);
      if (scenario.limitsRefuse) throw rateLimited(1000);
    },
  } as unknown as PurchaseRateLimits;
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
  const dbPurchase = {
    purchase: async (_sale: SaleTerms, _user: string, _token: string, _quantity: number, strategy: string) => (
      calls.push(`db ${strategy}`),
      { orderNo: 'FS-D', status: 'PENDING_PAYMENT' }
    ),
  } as unknown as DbPurchase;
  const metrics = {
    countPurchase: (outcome: string) => void calls.push(`count ${outcome}`),
  } as unknown as MetricsService;
  // These sales have no waiting room: the room is never asked.
  const room = {} as WaitingRoom;
  const service = new PurchaseService(
    catalog,
    {} as SubmitTokens,
    limits,
    reservation,
    fallback,
    dbPurchase,
    metrics,
    room,
  );
  return { service, calls };
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  return error instanceof DomainError ? error.code : String(error);
}

describe('PurchaseService (the dispatcher)', () => {
  it('sends a redis-lua purchase to the reservation, which counts the rate limits itself', async () => {
    const { service, calls } = dispatcher({ sale: saleOf('redis-lua') });
    await expect(service.purchase('u1', '7', ORDER)).resolves.toEqual({ orderNo: 'FS-R', status: 'QUEUED' });
    expect(calls).toEqual(['beforeRedisSells', 'reserve']);
  });

  it('sends a MySQL strategy straight to MySQL, after spending the rate limits', async () => {
    for (const strategy of ['db-optimistic', 'db-segmented', 'db-pessimistic', 'redis-lock', 'naive-unsafe'] as const) {
      const { service, calls } = dispatcher({ sale: saleOf(strategy) });
      await expect(service.purchase('u1', '7', ORDER)).resolves.toMatchObject({ status: 'PENDING_PAYMENT' });
      expect(calls).toEqual(['limits 7', `db ${strategy}`, 'count accepted']);
    }
  });

  it('answers 429 before anything is sold when the limits refuse', async () => {
    const { service, calls } = dispatcher({ sale: saleOf('db-optimistic'), limitsRefuse: true });
    expect(await codeOf(service.purchase('u1', '7', ORDER))).toBe(ErrorCode.RateLimited);
    expect(calls).toEqual(['limits 7']);
  });

  it('answers an unknown sale 404 after its rate limits (429 first, docs/api.md order)', async () => {
    const unknown = dispatcher({});
    expect(await codeOf(unknown.service.purchase('u1', '99', ORDER))).toBe(ErrorCode.SaleNotFound);
    expect(unknown.calls).toEqual(['limits 99']);
    const limited = dispatcher({ limitsRefuse: true });
    expect(await codeOf(limited.service.purchase('u1', '99', ORDER))).toBe(ErrorCode.RateLimited);
  });

  it('sells through the MySQL fallback while Redis is down, spending the limits first', async () => {
    const { service, calls } = dispatcher({ sale: saleOf('redis-lua'), fallbackFirst: true });
    await expect(service.purchase('u1', '7', ORDER)).resolves.toEqual({ orderNo: 'FS-F', status: 'PENDING_PAYMENT' });
    expect(calls).toEqual(['limits 7', 'fallback', 'count accepted']);
  });

  it('hands a reservation that found Redis down to the fallback, and passes any other failure on', async () => {
    const down = dispatcher({ sale: saleOf('redis-lua'), reservationFails: redisDown });
    await expect(down.service.purchase('u1', '7', ORDER)).resolves.toMatchObject({ orderNo: 'FS-F' });
    expect(down.calls).toEqual(['beforeRedisSells', 'reserve', 'fallback', 'count accepted']);

    const refused = new DomainError(ErrorCode.LimitReached, 'limit');
    const other = dispatcher({ sale: saleOf('redis-lua'), reservationFails: refused });
    expect(await codeOf(other.service.purchase('u1', '7', ORDER))).toBe(ErrorCode.LimitReached);
    expect(other.calls).not.toContain('fallback');
  });
});
