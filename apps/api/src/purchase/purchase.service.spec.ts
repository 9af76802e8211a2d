import { DomainError, ErrorCode, type SaleStrategy, type SaleTerms } from '@flash-sale/domain';
import type { PurchaseRateLimits } from '../protection/purchase-rate-limits';
import { rateLimited } from '../protection/retry-later.error';
import type { SaleCatalog } from '../sales/sale-catalog';
import type { WaitingRoom } from '../waiting-room/waiting-room.service';
import { PurchaseService } from './purchase.service';
import type { StockStrategy } from './stock-strategy';
import type { StockStrategies } from './strategies/stock-strategies';
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

interface Scenario {
  sale?: SaleTerms;
  /** The sale's strategy counts the rate limits itself (redis-lua's reservation script). */
  strategyCountsRateLimits?: boolean;
  limitsRefuse?: boolean;
}

/** The dispatcher's collaborators as recorders: the test reads the order in which it asked them. */
function dispatcher(scenario: Scenario) {
  const calls: string[] = [];
  const catalog = {
    peek: () => scenario.sale,
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
  const strategy: StockStrategy = {
    countsRateLimits: () => scenario.strategyCountsRateLimits ?? false,
    tokenIssued: async (_sale, _user, token) => void calls.push(`tokenIssued ${token}`),
    sell: async (sale) => (
      calls.push(`sell ${sale.strategy}`),
      { orderNo: 'FS-1', status: 'PENDING_PAYMENT', made: 'written', replay: false }
    ),
  };
  const strategies = { of: () => strategy } as unknown as StockStrategies;
  const tokens = {
    ttlSeconds: 60,
    sign: () => ({ token: 'signed', expiresAt: new Date() }),
  } as unknown as SubmitTokens;
  const room = { requireAdmission: () => undefined } as unknown as WaitingRoom;
  return { service: new PurchaseService(catalog, tokens, limits, strategies, room), calls };
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  return error instanceof DomainError ? error.code : String(error);
}

describe('PurchaseService (the dispatcher)', () => {
  it('spends the rate limits, then asks the sale strategy', async () => {
    const { service, calls } = dispatcher({ sale: saleOf('db-pessimistic') });
    await expect(service.purchase('u1', '7', ORDER)).resolves.toMatchObject({
      orderNo: 'FS-1',
      status: 'PENDING_PAYMENT',
    });
    expect(calls).toEqual(['limits 7', 'sell db-pessimistic']);
  });

  it('leaves the rate limits to a strategy that counts them itself', async () => {
    const { service, calls } = dispatcher({ sale: saleOf('redis-lua'), strategyCountsRateLimits: true });
    await service.purchase('u1', '7', ORDER);
    expect(calls).toEqual(['sell redis-lua']);
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

  it('answers a bad body 400 after its rate limits (429 first, docs/api.md order)', async () => {
    const badBody = new DomainError(ErrorCode.ValidationFailed, 'quantity must be an integer');
    const known = dispatcher({ sale: saleOf('redis-lua') });
    await expect(known.service.refuseBody('u1', '7', badBody)).rejects.toBe(badBody);
    expect(known.calls).toEqual(['limits 7']);
    const limited = dispatcher({ limitsRefuse: true });
    expect(await codeOf(limited.service.refuseBody('u1', '99', badBody))).toBe(ErrorCode.RateLimited);
  });

  it('hands a signed submit token to the sale strategy before the buyer has it', async () => {
    const { service, calls } = dispatcher({ sale: saleOf('redis-lua') });
    await expect(service.issueToken({ id: 'u1' } as never, '7')).resolves.toMatchObject({ token: 'signed' });
    expect(calls).toEqual(['tokenIssued signed']);
  });
});
