import { judgeAnswers } from './answer-rules';
import type { FinalState } from './checker';
import { History, type Operation } from './history';
import type { EndsAtSample } from './sale-window';
import { RunWorld } from './world';

/**
 * The answer rules' judgement of a promised token's later answers (docs/failure-model.md, "The answer
 * rules", rule 3), on histories written out by hand: what the explorer records, without a run.
 */
describe('answer rules: one token, the same answer from every process', () => {
  const OPEN_UNTIL = 10_000_000; // an end far after every instant below
  const T = 100_000; // the admin ends the sale (MySQL's new end) at this instant
  const ORDER = 'S1-ORDER';

  function judge(operations: Omit<Operation, 'index' | 'api' | 'buyer' | 'faultsActive'>[], samples: EndsAtSample[]) {
    const history = new History();
    for (const operation of operations) history.record({ api: 0, buyer: 1, faultsActive: '', ...operation });
    const world = {
      history,
      window: { samples },
      sale: { stock: 10 },
      dataLossAfter: () => undefined,
      mysqlChangeVisibleFrom: (stampedAt: number) => stampedAt,
    } as unknown as RunWorld;
    const state = {
      orders: [
        { order_no: ORDER, user_id: 'u1', quantity: 1, status: 'PENDING_PAYMENT', submit_token: 'tok', updatedAt: 0 },
      ],
    } as unknown as FinalState;
    return judgeAnswers(world, state).map((violation) => violation.invariant);
  }

  const bought = { kind: 'buy', subject: 'tok', quantity: 1, outcome: 'ok', status: 202, orderNo: ORDER } as const;
  const replay = { kind: 'replay', subject: 'tok', quantity: 1 } as const;
  /** Readings every 250 ms before the end, each showing the sale open. */
  const readingsBefore = Array.from({ length: 4 }, (_, i) => ({
    startedAt: T - 1_000 + i * 250,
    answeredAt: T - 1_000 + i * 250 + 5,
    endsAt: OPEN_UNTIL,
  }));

  it('SALE_ENDED to a replay after the end passes, though the next reading of MySQL came late (a slow MySQL)', () => {
    const violations = judge(
      [
        { ...bought, sentAt: T - 5_000, answeredAt: T - 4_950 },
        { ...replay, outcome: 'fail', status: 410, code: 'SALE_ENDED', sentAt: T + 50, answeredAt: T + 60 },
      ],
      [...readingsBefore, { startedAt: T + 1_500, answeredAt: T + 3_000, endsAt: T }],
    );
    expect(violations).toEqual([]);
  });

  it('SALE_ENDED while every reading around the request shows the sale open is a violation', () => {
    const violations = judge(
      [
        { ...bought, sentAt: T - 5_000, answeredAt: T - 4_950 },
        { ...replay, outcome: 'fail', status: 410, code: 'SALE_ENDED', sentAt: T + 50, answeredAt: T + 60 },
      ],
      [...readingsBefore, { startedAt: T + 1_500, answeredAt: T + 3_000, endsAt: OPEN_UNTIL }],
    );
    expect(violations).toEqual(['a promised token gets the same answer from every process']);
  });

  it('SALE_ENDED from a process whose clock runs ahead, within its skew of the end, passes; beyond it, not', () => {
    // The admin's end is T; the answering process's clock is 3 s ahead, so it saw the end at T − 3 s.
    const endedBy = (answeredAt: number, skewMs: number) =>
      judge(
        [
          { ...bought, sentAt: T - 10_000, answeredAt: T - 9_950 },
          { ...replay, outcome: 'fail', status: 410, code: 'SALE_ENDED', sentAt: answeredAt - 10, answeredAt, skewMs },
        ],
        [
          ...Array.from({ length: 40 }, (_, i) => ({
            startedAt: T - 6_000 + i * 250,
            answeredAt: T - 6_000 + i * 250 + 5,
            endsAt: T,
          })),
        ],
      );
    expect(endedBy(T - 2_500, 3_000)).toEqual([]);
    expect(endedBy(T - 2_500, 0)).toEqual(['a promised token gets the same answer from every process']);
    // A clock behind says the end later, never sooner: no allowance.
    expect(endedBy(T - 2_500, -3_000)).toEqual(['a promised token gets the same answer from every process']);
    expect(endedBy(T - 4_000, 3_000)).toEqual(['a promised token gets the same answer from every process']);
  });

  it('SALE_ENDED in a gap of the readings (a MySQL failover) passes if the last reading showed it ended and no reopen could have come since', () => {
    const endedReadings = Array.from({ length: 4 }, (_, i) => ({
      startedAt: T + i * 250,
      answeredAt: T + i * 250 + 5,
      endsAt: T,
    }));
    // MySQL cannot be read from T + 1 s to T + 8 s; the reading after the gap shows the sale reopened.
    const afterGap = { startedAt: T + 8_000, answeredAt: T + 8_010, endsAt: OPEN_UNTIL };
    const refusedInGap = {
      ...replay,
      outcome: 'fail',
      status: 410,
      code: 'SALE_ENDED',
      sentAt: T + 5_000,
      answeredAt: T + 5_010,
    } as const;
    const reopen = { kind: 'reopen', subject: 'endsAt=now+1h', quantity: 0 } as const;
    const judged = (reopens: Omit<Operation, 'index' | 'api' | 'buyer' | 'faultsActive'>[]) =>
      judge(
        [{ ...bought, sentAt: T - 5_000, answeredAt: T - 4_950 }, refusedInGap, ...reopens],
        [...readingsBefore, ...endedReadings, afterGap],
      );
    // The reopen was sent after the answer: the end held when it was given.
    expect(judged([{ ...reopen, outcome: 'ok', status: 200, sentAt: T + 6_000, answeredAt: T + 6_030 }])).toEqual([]);
    // A reopen refused changed nothing.
    expect(judged([{ ...reopen, outcome: 'fail', status: 400, sentAt: T + 3_000, answeredAt: T + 3_010 }])).toEqual([]);
    // A reopen sent in the gap, before the answer, may have reopened the sale: the refusal is not explained.
    for (const outcome of [
      { outcome: 'ok', status: 200 },
      { outcome: 'info', status: 503 },
    ] as const) {
      expect(judged([{ ...reopen, ...outcome, sentAt: T + 3_000, answeredAt: T + 3_030 }])).toEqual([
        'a promised token gets the same answer from every process',
      ]);
    }
  });

  it('SOLD_OUT or LIMIT_REACHED to a promised token is a violation; the same order again is not', () => {
    const refusedAs = (code: string) =>
      judge(
        [
          { ...bought, sentAt: T - 5_000, answeredAt: T - 4_950 },
          { ...replay, outcome: 'ok', status: 201, orderNo: ORDER, sentAt: T - 3_000, answeredAt: T - 2_990 },
          { ...replay, outcome: 'fail', status: code === 'SOLD_OUT' ? 410 : 409, code, sentAt: T, answeredAt: T + 5 },
        ],
        readingsBefore,
      );
    expect(refusedAs('SOLD_OUT')).toContain('a promised token gets the same answer from every process');
    expect(refusedAs('LIMIT_REACHED')).toEqual(['a promised token gets the same answer from every process']);
  });
});

/**
 * Rule 3 continued: a promised token replayed after its order was cancelled or expired is answered with
 * the order as it is.
 */
describe('answer rules: no sale after its end', () => {
  const T = 100_000; // the admin ends the sale (MySQL's new end) at this instant
  const REOPENED = T + 10_000; // ...and reopens it (a new end an hour later) at this one
  const ORDER = 'S1-ORDER';

  /** MySQL read every 250 ms: open until T, ended from T until REOPENED, open again after. */
  const samples: EndsAtSample[] = Array.from({ length: 120 }, (_, i) => {
    const startedAt = T - 5_000 + i * 250;
    return { startedAt, answeredAt: startedAt + 5, endsAt: startedAt >= T && startedAt < REOPENED ? T : T + 3_600_000 };
  });

  function judge(operations: Omit<Operation, 'index' | 'api' | 'buyer' | 'faultsActive'>[]) {
    const history = new History();
    for (const operation of operations) history.record({ api: 0, buyer: 1, faultsActive: '', ...operation });
    const world = { history, window: { samples }, sale: { stock: 10 }, dataLossAfter: () => undefined };
    const state = {
      orders: [
        { order_no: ORDER, user_id: 'u1', quantity: 1, status: 'PENDING_PAYMENT', submit_token: 'tok', updatedAt: 0 },
      ],
    } as unknown as FinalState;
    return judgeAnswers(world as unknown as RunWorld, state)
      .map((violation) => violation.invariant)
      .filter((invariant) => invariant === 'no sale after its end');
  }

  const attempt = { kind: 'buy', subject: 'tok', quantity: 1 } as const;
  const accepted = { outcome: 'ok', status: 202, orderNo: ORDER } as const;
  const unknown = { outcome: 'info', status: 503 } as const;

  it('a 202 to a purchase sent while the sale had ended is a violation', () => {
    expect(judge([{ ...attempt, ...accepted, sentAt: T + 2_000, answeredAt: T + 2_010 }])).toEqual([
      'no sale after its end',
    ]);
  });

  it('an attempt with an unknown outcome while ended, accepted after a reopen, may have reserved after the reopen: no violation', () => {
    expect(
      judge([
        { ...attempt, ...unknown, sentAt: T + 2_000, answeredAt: T + 2_006 },
        { ...attempt, kind: 'replay', ...accepted, sentAt: REOPENED + 5_000, answeredAt: REOPENED + 5_020 },
      ]),
    ).toEqual([]);
  });

  it('every attempt that may have reserved sent while ended is a violation, however many', () => {
    expect(
      judge([
        { ...attempt, ...unknown, sentAt: T + 2_000, answeredAt: T + 2_006 },
        { ...attempt, kind: 'replay', ...accepted, sentAt: T + 4_000, answeredAt: T + 4_020 },
      ]),
    ).toEqual(['no sale after its end']);
  });

  it('a purchase made before the end, answered its order after it, is no violation', () => {
    expect(
      judge([
        { ...attempt, ...accepted, sentAt: T - 2_000, answeredAt: T - 1_990 },
        { ...attempt, kind: 'replay', ...accepted, sentAt: T + 2_000, answeredAt: T + 2_010 },
      ]),
    ).toEqual([]);
  });
});

describe('answer rules: a replay answers the order as it is', () => {
  const T = 100_000;
  const ORDER = 'S1-ORDER';

  function judge(
    replayStatus: string,
    rowStatus: string,
    replay: {
      faultsActive?: string;
      afterMs?: number;
      cancelled?: boolean;
      /** Spans in which MySQL's primary held its commits for its replica. */
      commitHolds?: { from: number; until?: number }[];
    } = {},
  ) {
    const history = new History();
    const base = { api: 0, buyer: 1, faultsActive: '', subject: 'tok', quantity: 1 } as const;
    history.record({
      ...base,
      kind: 'buy',
      outcome: 'ok',
      status: 201,
      orderNo: ORDER,
      orderStatus: 'PENDING_PAYMENT',
      sentAt: T,
      answeredAt: T + 5,
    });
    if (replay.cancelled ?? true) {
      history.record({
        ...base,
        kind: 'cancel',
        subject: ORDER,
        quantity: undefined,
        outcome: 'ok',
        status: 200,
        sentAt: T + 1_000,
        answeredAt: T + 1_010,
      });
    }
    const sentAt = T + 1_005 + (replay.afterMs ?? 1_995);
    history.record({
      ...base,
      faultsActive: replay.faultsActive ?? '',
      kind: 'replay',
      outcome: 'ok',
      status: replayStatus === 'QUEUED' ? 202 : 201,
      orderNo: ORDER,
      orderStatus: replayStatus,
      sentAt,
      answeredAt: sentAt + 5,
    });
    const commitHolds = { mysqlCommitHolds: replay.commitHolds ?? [] };
    const world = {
      history,
      window: { samples: [] },
      sale: { stock: 10 },
      dataLossAfter: () => undefined,
      mysqlChangeVisibleFrom: (stampedAt: number) =>
        RunWorld.prototype.mysqlChangeVisibleFrom.call(commitHolds, stampedAt),
    } as unknown as RunWorld;
    const state = {
      orders: [
        { order_no: ORDER, user_id: 'u1', quantity: 1, status: rowStatus, submit_token: 'tok', updatedAt: T + 1_005 },
      ],
    } as unknown as FinalState;
    return judgeAnswers(world, state).map((violation) => violation.invariant);
  }

  it('PENDING_PAYMENT or QUEUED to a replay after the cancel is a violation', () => {
    expect(judge('PENDING_PAYMENT', 'CANCELLED')).toEqual(['a replay answers the order as it is']);
    expect(judge('QUEUED', 'CANCELLED')).toEqual(['a replay answers the order as it is']);
  });

  it('an expiry seen late while MySQL is slow (its commit after the statement) passes; long after, it is a violation', () => {
    const expired = (afterMs: number, faultsActive: string) =>
      judge('PENDING_PAYMENT', 'EXPIRED', { cancelled: false, afterMs, faultsActive });
    expect(expired(2_500, '')).toEqual(['a replay answers the order as it is']);
    expect(expired(2_500, 'mysql slow')).toEqual([]);
    expect(expired(12_000, 'mysql slow')).toEqual(['a replay answers the order as it is']);
    expect(expired(2_500, 'mysql paused')).toEqual([]);
  });

  it('an expiry whose commit the primary held for its cut-off replica is judged from when the link was back, or the primary gave up waiting', () => {
    const expired = (afterMs: number, commitHolds: { from: number; until?: number }[]) =>
      judge('PENDING_PAYMENT', 'EXPIRED', { cancelled: false, afterMs, commitHolds });
    // Stamped at T + 1005, inside a hold from T + 500 to T + 2000: seen from T + 12000 at the latest (the
    // link back, and the replica caught up).
    const heldBriefly = [{ from: T + 500, until: T + 2_000 }];
    expect(expired(5_000, heldBriefly)).toEqual([]);
    expect(expired(13_000, heldBriefly)).toEqual(['a replay answers the order as it is']);
    // Held longer than the primary waits (SEMI_SYNC_WAIT_MS, 10 s): seen from T + 12005 whether or not
    // the link is back.
    for (const hold of [{ from: T + 500, until: T + 30_000 }, { from: T + 500 }]) {
      expect(expired(11_000, [hold])).toEqual([]);
      expect(expired(13_000, [hold])).toEqual(['a replay answers the order as it is']);
    }
    // A hold over before the stamp changes nothing.
    expect(expired(2_500, [{ from: T - 5_000, until: T }])).toEqual(['a replay answers the order as it is']);
  });

  it('the order answered CANCELLED passes', () => {
    expect(judge('CANCELLED', 'CANCELLED')).toEqual([]);
  });
});
