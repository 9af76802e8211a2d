import type { StockLeases } from '@flash-sale/stock';
import { DomainError, ErrorCode, RetryLaterError, type SaleTerms } from '@flash-sale/domain';
import type { ReservationScripts, ReserveInput, ReserveResult } from '@flash-sale/redis';
import { Logger } from '@nestjs/common';
import type { MetricsService } from '../../../metrics/metrics.service';
import type { PurchaseRateLimits } from '../../../protection/purchase-rate-limits';
import type { IncarnationGuard } from './incarnation-guard';
import { RedisReservation } from './redis-reservation';
import type { ReservationFollowUp } from './reservation-follow-up';
import type { SoldOutGate } from './sold-out-gate';
import type { SubmitTokens } from '../../submit-tokens';
import type { TokenOrders } from '../../token-orders';
import type { RedisTokens } from './redis-tokens';

const SALE: SaleTerms = {
  id: '7',
  priceCents: 100,
  perUserLimit: 2,
  strategy: 'redis-lua',
  buckets: 1,
  paymentTimeoutSeconds: 60,
  startsAt: new Date(0),
  endsAt: new Date(Date.now() + 3_600_000),
};
const ORDER = { token: 'submit-token-1', quantity: 1 };
const LIMITS = { perUser: { points: 5, windowMs: 1000 }, perSale: { points: 50, windowMs: 1000 } };

type Reserved = Extract<ReserveResult, { kind: 'reserved' | 'replayed' }>;

const reserved = (overrides: Partial<Reserved> = {}): ReserveResult => ({
  kind: 'reserved',
  orderNo: 'FS-1',
  slot: 1,
  quantity: 1,
  reservedAt: new Date(),
  epoch: 3,
  balance: 10,
  backlog: 0,
  ...overrides,
});
const refused = (code: ErrorCode, saleNotLoaded = false): ReserveResult => ({ kind: 'refused', code, saleNotLoaded });

/**
 * The reservation's collaborators as recorders: the script answers what the test scripts it to, MySQL's
 * leases answer what the test says. What is checked is the reservation's own logic — which refusals it
 * resolves and retries, which it passes on, and what it asks of the others — not Redis's or MySQL's.
 */
function world(
  answers: ReserveResult[],
  options: {
    refills?: number[];
    inDoubt?: number;
    /** MySQL's `available` when the reservation asks after its refill (units settled or returned since). */
    availableAfterRefill?: number;
    tokenSigned?: boolean;
    /** Signed for the buyer but past its expiry. */
    tokenExpired?: boolean;
    /** MySQL holds an order made with the token. */
    orderInMySql?: boolean;
    /** The connection to Redis is lost during these refills (the guard must verify before the next try). */
    connectionLostDuringRefill?: boolean;
    /** Verifications that another lost connection overtakes (each leaves the sale unverified). */
    overtakenVerifications?: number;
    /** This instance holds a sold-out flag of the sale. */
    soldOutFlag?: boolean;
    /** The token was issued after this copy of Redis became the current one (it cannot lack its purchase). */
    tokenIssuedSinceCopy?: boolean;
  } = {},
) {
  const calls: string[] = [];
  let unverified = false;
  let overtaken = options.overtakenVerifications ?? 0;
  const scriptInputs: ReserveInput[] = [];
  const refills = [...(options.refills ?? [])];
  const scripts = {
    reserve: async (input: ReserveInput) => {
      scriptInputs.push(input);
      const answer = answers.shift();
      if (!answer) throw new Error('the script was asked more often than the test expected');
      return answer;
    },
  } as unknown as ReservationScripts;
  const leases = {
    ensureLoaded: async () => void calls.push('ensureLoaded'),
    refill: async (_sale: unknown, _bucket: number, wanted: number) => {
      calls.push(`refill ${wanted}`);
      if (options.connectionLostDuringRefill) unverified = true;
      return refills.shift() ?? 0;
    },
    unsettledOrReturned: async () => (
      calls.push('unsettledOrReturned'),
      { inDoubt: options.inDoubt ?? 0, available: options.availableAfterRefill ?? 0 }
    ),
  } as unknown as StockLeases;
  const limits = { inReservation: () => LIMITS } as unknown as PurchaseRateLimits;
  const tokens = {
    orderNumberOf: (token: string) => `S7-number-of-${token}`,
    signedFor: () => options.tokenSigned ?? false,
    verify: () => (options.tokenSigned ?? false) && !options.tokenExpired,
    issuedAtMs: () => (options.tokenIssuedSinceCopy ? 2 : 1),
  } as unknown as SubmitTokens;
  const redisTokens = { adopt: async () => void calls.push('adopt') } as unknown as RedisTokens;
  const tokenOrders = {
    orderOfToken: async () => (
      calls.push('orderOfToken'),
      options.orderInMySql ? { orderNo: 'S7-IN-MYSQL', status: 'PENDING_PAYMENT' } : undefined
    ),
    // MySQL's row of a replayed reservation, as it is now.
    replayOfReservation: async (orderNo: string) => (
      calls.push('replayOfReservation'),
      { orderNo, status: 'CANCELLED', made: 'written', replay: true }
    ),
  } as unknown as TokenOrders;
  const soldOut = {
    noteSoldOut: () => void calls.push('noteSoldOut'),
    isFlagged: () => options.soldOutFlag ?? false,
  } as unknown as SoldOutGate;
  const incarnations = {
    mayLackPurchaseOf: (issuedAtMs: number) => issuedAtMs < 2,
    mustVerify: () => unverified,
    verify: async () => {
      calls.push('verify');
      if (overtaken > 0) overtaken -= 1;
      else unverified = false;
    },
  } as unknown as IncarnationGuard;
  const followUp = {
    masterOf: () => undefined,
    complete: async () => void calls.push('complete'),
  } as unknown as ReservationFollowUp;
  const metrics = {
    reservationTimer: () => () => undefined,
    countPurchase: (outcome: string) => void calls.push(`count ${outcome}`),
  } as unknown as MetricsService;
  const reservation = new RedisReservation(
    scripts,
    leases,
    limits,
    tokens,
    tokenOrders,
    redisTokens,
    soldOut,
    incarnations,
    followUp,
    metrics,
  );
  return { reservation, calls, scriptInputs, answersLeft: answers };
}

/** One purchase whose one try the script answers with `scripted`: the buyer's answer, and the world's records. */
async function reserveOnce(scripted: ReserveResult) {
  const recorded = world([scripted]);
  return { ...recorded, answer: await recorded.reservation.reserve(SALE, 'u1', ORDER) };
}

async function refusalOf(promise: Promise<unknown>): Promise<DomainError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!(error instanceof DomainError)) throw new Error(`expected a refusal, got ${String(error)}`);
  return error;
}

beforeAll(() => Logger.overrideLogger(false));

describe('RedisReservation', () => {
  it('answers 202 QUEUED, with the follow-up done and the rate limits counted by the script', async () => {
    const { answer, calls, scriptInputs } = await reserveOnce(reserved());
    expect(answer).toEqual({ orderNo: 'FS-1', status: 'QUEUED', made: 'reserved', replay: false });
    expect(calls).toEqual(['complete', 'count accepted']);
    expect(scriptInputs).toHaveLength(1);
    expect(scriptInputs[0]).toMatchObject({ userId: 'u1', submitToken: ORDER.token, quantity: 1, rateLimits: LIMITS });
  });

  it("reserves under the token's own order number; a taken one is retried with a fresh one, the rate limits counted once", async () => {
    const { reservation, scriptInputs } = world([{ kind: 'order-number-taken' }, reserved()]);
    await reservation.reserve(SALE, 'u1', ORDER);
    expect(scriptInputs.map((input) => input.rateLimits)).toEqual([LIMITS, undefined]);
    expect(scriptInputs[0]!.orderNo).toBe(`S7-number-of-${ORDER.token}`);
    expect(scriptInputs[1]!.orderNo).not.toBe(scriptInputs[0]!.orderNo);
  });

  it('refills from MySQL before SOLD_OUT, and sells what the refill brought', async () => {
    const { reservation, calls } = world([refused(ErrorCode.SoldOut), reserved()], { refills: [4] });
    await expect(reservation.reserve(SALE, 'u1', { ...ORDER, quantity: 2 })).resolves.toMatchObject({
      status: 'QUEUED',
    });
    expect(calls).toContain('refill 2');
    expect(calls).not.toContain('noteSoldOut');
  });

  it('says SOLD_OUT only once MySQL had nothing to lease and Redis still refused, and flags the sale', async () => {
    const { reservation, calls } = world([refused(ErrorCode.SoldOut), refused(ErrorCode.SoldOut)], { refills: [0] });
    expect((await refusalOf(reservation.reserve(SALE, 'u1', ORDER))).code).toBe(ErrorCode.SoldOut);
    expect(calls).toEqual(['refill 1', 'unsettledOrReturned', 'noteSoldOut']);
  });

  it.each([
    {
      name: 'with a sold-out flag held, a SOLD_OUT from Redis is final: MySQL is asked nothing',
      code: ErrorCode.SoldOut,
      options: { soldOutFlag: true, tokenSigned: true, tokenIssuedSinceCopy: true },
    },
    {
      name: 'an expired token Redis does not know, issued since this copy is current, is refused without asking MySQL',
      code: ErrorCode.TokenInvalid,
      options: { tokenSigned: true, tokenExpired: true, tokenIssuedSinceCopy: true },
    },
  ])('$name', async ({ code, options }) => {
    const { reservation, calls } = world([refused(code)], options);
    expect((await refusalOf(reservation.reserve(SALE, 'u1', ORDER))).code).toBe(code);
    expect(calls).toEqual([]);
  });

  it('LIMIT_REACHED or SOLD_OUT to a token issued since this copy of Redis is current costs no MySQL query', async () => {
    for (const code of [ErrorCode.LimitReached, ErrorCode.SoldOut]) {
      const { reservation, calls } = world([refused(code)], {
        soldOutFlag: true,
        tokenSigned: true,
        tokenIssuedSinceCopy: true,
        orderInMySql: true,
      });
      expect((await refusalOf(reservation.reserve(SALE, 'u1', ORDER))).code).toBe(code);
      expect(calls).not.toContain('orderOfToken');
    }
  });

  it('a token issued before this copy became current may have bought in a lost one: its order in MySQL is the answer', async () => {
    const { reservation, calls } = world([refused(ErrorCode.LimitReached)], { tokenSigned: true, orderInMySql: true });
    await expect(reservation.reserve(SALE, 'u1', ORDER)).resolves.toMatchObject({ orderNo: 'S7-IN-MYSQL' });
    expect(calls).toEqual(['orderOfToken']);
  });

  it('answers 503 + retry-after, not SOLD_OUT, while units are in doubt after an outage', async () => {
    const { reservation, calls } = world([refused(ErrorCode.SoldOut), refused(ErrorCode.SoldOut)], {
      refills: [0],
      inDoubt: 3,
    });
    const error = await refusalOf(reservation.reserve(SALE, 'u1', ORDER));
    expect(error).toBeInstanceOf(RetryLaterError);
    expect(error.code).toBe(ErrorCode.Unavailable);
    expect(calls).not.toContain('noteSoldOut');
  });

  it('answers 503, not SOLD_OUT, when units came back to MySQL after its refill found none (a settlement, a cancel)', async () => {
    // The refill read MySQL empty while the units were in doubt; reconciliation settled them to
    // `available` before the reservation asked about doubt: they are for sale, and nobody has leased them.
    const { reservation, calls } = world([refused(ErrorCode.SoldOut), refused(ErrorCode.SoldOut)], {
      refills: [0],
      availableAfterRefill: 704,
    });
    const error = await refusalOf(reservation.reserve(SALE, 'u1', ORDER));
    expect(error).toBeInstanceOf(RetryLaterError);
    expect(error.code).toBe(ErrorCode.Unavailable);
    expect(calls).not.toContain('noteSoldOut');
  });

  it('on its last try too: a SOLD_OUT is final only once no unit is in doubt', async () => {
    // A stale copy replaced on the way (the refill's 1), then MySQL empty: the last try is a SOLD_OUT
    // while the lost copy's leases are in doubt.
    const soldOut = refused(ErrorCode.SoldOut);
    const inDoubt = world([refused(ErrorCode.TokenInvalid), soldOut, soldOut, soldOut], {
      tokenSigned: true,
      refills: [1, 0],
      inDoubt: 3,
    });
    expect((await refusalOf(inDoubt.reservation.reserve(SALE, 'u1', ORDER))).code).toBe(ErrorCode.Unavailable);
    expect(inDoubt.calls).not.toContain('noteSoldOut');
    // The same tries with nothing in doubt: sold out, and flagged.
    const settled = world([refused(ErrorCode.TokenInvalid), soldOut, soldOut, soldOut], {
      tokenSigned: true,
      refills: [1, 0],
    });
    expect((await refusalOf(settled.reservation.reserve(SALE, 'u1', ORDER))).code).toBe(ErrorCode.SoldOut);
    expect(settled.calls.slice(-3)).toEqual(['unsettledOrReturned', 'noteSoldOut', 'orderOfToken']);
    // Redis lost the sale on the last try: not proven either way.
    const lostAgain = world([refused(ErrorCode.TokenInvalid), soldOut, soldOut, refused(ErrorCode.SoldOut, true)], {
      tokenSigned: true,
      refills: [1, 0],
    });
    expect((await refusalOf(lostAgain.reservation.reserve(SALE, 'u1', ORDER))).code).toBe(ErrorCode.Unavailable);
  });

  it('answers 503, not SOLD_OUT, when every attempt found units that went to others', async () => {
    const soldOut = refused(ErrorCode.SoldOut);
    const { reservation } = world([soldOut, soldOut, soldOut, soldOut], { refills: [1, 1, 1, 1] });
    const error = await refusalOf(reservation.reserve(SALE, 'u1', ORDER));
    expect(error.code).toBe(ErrorCode.Unavailable);
  });

  it('verifies the incarnation before every try: Redis may come back from an older copy while a refill waits', async () => {
    const { reservation, calls } = world([refused(ErrorCode.SoldOut), refused(ErrorCode.SoldOut)], {
      refills: [0],
      connectionLostDuringRefill: true,
    });
    expect((await refusalOf(reservation.reserve(SALE, 'u1', ORDER))).code).toBe(ErrorCode.SoldOut);
    expect(calls).toEqual(['refill 1', 'verify', 'unsettledOrReturned', 'noteSoldOut']);
  });

  it('asks the buyer to retry, sending no script, while every verification is overtaken by another lost connection', async () => {
    const { reservation, calls, scriptInputs } = world([refused(ErrorCode.SoldOut)], {
      refills: [0],
      connectionLostDuringRefill: true,
      overtakenVerifications: 5,
    });
    expect((await refusalOf(reservation.reserve(SALE, 'u1', ORDER))).code).toBe(ErrorCode.Unavailable);
    expect(calls).toEqual(['refill 1', 'verify', 'verify', 'verify']);
    expect(scriptInputs).toHaveLength(1);
  });

  it('reloads a sale Redis lost, then asks again', async () => {
    const { reservation, calls } = world([refused(ErrorCode.SoldOut, true), reserved()]);
    await reservation.reserve(SALE, 'u1', ORDER);
    expect(calls.slice(0, 1)).toEqual(['ensureLoaded']);
  });

  it('adopts a validly signed token Redis does not know, once, when MySQL has no order with it', async () => {
    const invalid = refused(ErrorCode.TokenInvalid);
    const adopted = world([invalid, reserved()], { tokenSigned: true });
    await expect(adopted.reservation.reserve(SALE, 'u1', ORDER)).resolves.toMatchObject({ status: 'QUEUED' });
    expect(adopted.calls).toEqual(['orderOfToken', 'adopt', 'complete', 'count accepted']);

    const twice = world([invalid, invalid], { tokenSigned: true });
    expect((await refusalOf(twice.reservation.reserve(SALE, 'u1', ORDER))).code).toBe(ErrorCode.TokenInvalid);
    expect(twice.calls.filter((call) => call === 'adopt')).toHaveLength(1);

    const unsigned = world([invalid]);
    expect((await refusalOf(unsigned.reservation.reserve(SALE, 'u1', ORDER))).code).toBe(ErrorCode.TokenInvalid);
    expect(unsigned.calls).not.toContain('adopt');
  });

  it("answers a token Redis forgot with MySQL's order, expired or not; refuses an expired one that bought nothing", async () => {
    const invalid = refused(ErrorCode.TokenInvalid);
    const bought = world([invalid], { tokenSigned: true, tokenExpired: true, orderInMySql: true });
    await expect(bought.reservation.reserve(SALE, 'u1', ORDER)).resolves.toMatchObject({
      orderNo: 'S7-IN-MYSQL',
      status: 'PENDING_PAYMENT',
    });
    const unbought = world([invalid], { tokenSigned: true, tokenExpired: true });
    expect((await refusalOf(unbought.reservation.reserve(SALE, 'u1', ORDER))).code).toBe(ErrorCode.TokenInvalid);
    expect(unbought.calls).toEqual(['orderOfToken']);
  });

  it('passes final refusals on at once, and a rate limit as 429', async () => {
    for (const code of [ErrorCode.LimitReached, ErrorCode.SaleEnded, ErrorCode.SaleNotStarted]) {
      const { reservation, answersLeft } = world([refused(code), reserved()]);
      expect((await refusalOf(reservation.reserve(SALE, 'u1', ORDER))).code).toBe(code);
      expect(answersLeft).toHaveLength(1);
    }
    const limited = world([{ kind: 'rate-limited', waitMs: 1500 }]);
    const error = await refusalOf(limited.reservation.reserve(SALE, 'u1', ORDER));
    expect(error.code).toBe(ErrorCode.RateLimited);
    expect((error as RetryLaterError).retryAfterSeconds).toBe(2);
  });

  it('replays an order MySQL sold itself as MySQL holds it now, with nothing left to follow up', async () => {
    const { answer, calls } = await reserveOnce(reserved({ kind: 'replayed', epoch: 0 }));
    expect(answer).toEqual({ orderNo: 'FS-1', status: 'CANCELLED', made: 'written', replay: true });
    expect(calls).toEqual(['count replayed', 'replayOfReservation']);
  });
});
