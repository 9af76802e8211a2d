import { judgeAnswers } from './answer-rules';
import type { FinalState } from './checker';
import { History, type Operation, type RoomSettings } from './history';
import { unexplainedRows, WARM_UP_LEFTOVER_GRACE_MS } from './mysql-rows';
import type { RunWorld } from './world';

/**
 * The waiting room's answer rules (docs/failure-model.md "The answer rules", 5–9) and the check of
 * MySQL's rows, on histories written out by hand: what the explorer records, without a run. Split from
 * answer-rules.spec.ts, which judges the purchase rules.
 */
type Written = Omit<Operation, 'index' | 'api' | 'faultsActive'>;

const T = 1_000_000; // the sale opened well before every instant below
const ROOM: RoomSettings = { admitPerSecond: 2, maxShopping: 2, passSeconds: 10 };

function judge(
  operations: Written[],
  options: { room?: RoomSettings | null; stock?: number; orders?: unknown[] } = {},
) {
  const history = new History();
  for (const operation of operations) history.record({ api: 0, faultsActive: '', ...operation });
  const world = {
    history,
    window: { samples: [] },
    sale: { stock: options.stock ?? 12, room: options.room === undefined ? ROOM : options.room, startsAt: 0 },
    dataLossAfter: () => undefined,
  } as unknown as RunWorld;
  const state = { orders: options.orders ?? [] } as unknown as FinalState;
  return judgeAnswers(world, state).map((violation) => violation.invariant);
}

const join = (buyer: number, at: number, position: number): Written => ({
  kind: 'join',
  buyer,
  subject: 'queue',
  outcome: 'ok',
  status: 201,
  ticket: { state: 'waiting', position, pollAfterMs: 1_000 },
  sentAt: at,
  answeredAt: at + 5,
});
const admitted = (buyer: number, at: number, passSeconds = 10): Written => ({
  kind: 'poll',
  buyer,
  subject: 'queue',
  outcome: 'ok',
  status: 200,
  ticket: { state: 'admitted', pollAfterMs: 1_000, passExpiresAt: at + passSeconds * 1_000 },
  sentAt: at,
  answeredAt: at + 5,
});
const waiting = (buyer: number, at: number, position: number): Written => ({
  ...join(buyer, at, position),
  kind: 'poll',
  status: 200,
});

describe('room rules: the cap', () => {
  it('a third buyer admitted while two others hold unspent passes (cap 2) is a violation', () => {
    const found = judge([admitted(1, T), admitted(2, T + 100), admitted(3, T + 200)]);
    expect(found).toContain('a room admits no one above its cap');
  });

  it('a third buyer admitted after one of the two bought (its turn over) passes', () => {
    const bought: Written = {
      kind: 'buy',
      buyer: 1,
      subject: 'tok1',
      quantity: 1,
      outcome: 'ok',
      status: 202,
      orderNo: 'S1-A',
      orderStatus: 'QUEUED',
      sentAt: T + 50,
      answeredAt: T + 60,
    };
    const found = judge([admitted(1, T), bought, admitted(2, T + 100), admitted(3, T + 200)], {
      orders: [
        { order_no: 'S1-A', user_id: 'u1', quantity: 1, status: 'PENDING_PAYMENT', submit_token: 'tok1', updatedAt: 0 },
      ],
    });
    expect(found).toEqual([]);
  });

  it('a pass expired frees its place: the next admission passes', () => {
    expect(judge([admitted(1, T), admitted(2, T + 100), admitted(3, T + 10_500)])).toEqual([]);
  });

  it('a pass given before a cap was set, first seen after it, is judged when it was given (its expiry tells)', () => {
    // No cap and 14-s passes, then the admin sets cap 2 with 11-s passes. Buyer 3 was admitted at T by
    // another buyer's poll (the room admits whoever is first in line), and hears of it only at T + 9 s.
    const uncapped: RoomSettings = { admitPerSecond: 3, passSeconds: 14 };
    const capped: Written = {
      kind: 'room',
      buyer: -1,
      subject: 'waitingRoom',
      outcome: 'ok',
      status: 200,
      room: { admitPerSecond: 1, maxShopping: 2, passSeconds: 11 },
      sentAt: T + 2_000,
      answeredAt: T + 2_010,
    };
    const heardLate: Written = { ...admitted(3, T, 14), sentAt: T + 9_000, answeredAt: T + 9_010 };
    const others = [admitted(1, T + 1_000, 14), admitted(2, T + 1_000, 14)];
    expect(judge([...others, capped, heardLate], { room: uncapped })).toEqual([]);
    // Given once the cap was in force everywhere (an 11-s pass; no 14-s pass could end then), with the two
    // others shopping: a violation.
    const givenUnderCap: Written = {
      ...admitted(3, T + 8_000, 11),
      sentAt: T + 9_000,
      answeredAt: T + 9_010,
    };
    expect(judge([...others, capped, givenUnderCap], { room: uncapped })).toEqual([
      'a room admits no one above its cap',
    ]);
  });
});

describe('room rules: no more shoppers than units remain', () => {
  it('a second shopper admitted when one unit is left is a violation; with two left it passes', () => {
    const room = { admitPerSecond: 2, passSeconds: 10 };
    expect(judge([admitted(1, T), admitted(2, T + 100)], { room, stock: 1 })).toContain(
      'a room admits no more shoppers than units remain',
    );
    expect(judge([admitted(1, T), admitted(2, T + 100)], { room, stock: 2 })).toEqual([]);
  });
});

describe('room rules: first come, first served after the opening', () => {
  it('a later joiner admitted while the earlier one still waits is a violation', () => {
    const found = judge([join(1, T, 1), join(2, T + 1_000, 2), admitted(2, T + 2_000), waiting(1, T + 3_000, 1)]);
    expect(found).toContain('a room admits first come, first served');
  });

  it('the earlier joiner admitted first, then the later one, passes', () => {
    expect(judge([join(1, T, 1), join(2, T + 1_000, 2), admitted(1, T + 2_000), admitted(2, T + 3_000)])).toEqual([]);
  });

  it('a span longer than the pass (the earlier joiner may have been admitted and expired unseen) is not judged', () => {
    expect(judge([join(1, T, 1), join(2, T + 1_000, 2), admitted(2, T + 2_000), waiting(1, T + 11_000, 1)])).toEqual(
      [],
    );
  });
});

describe("room rules: a ticket's sold_out is true", () => {
  const soldOut = (at: number): Written => ({
    kind: 'poll',
    buyer: 1,
    subject: 'queue',
    outcome: 'ok',
    status: 200,
    ticket: { state: 'sold_out', pollAfterMs: 10_000 },
    sentAt: at,
    answeredAt: at + 5,
  });
  const order = (n: number) => ({
    order_no: `S1-${n}`,
    user_id: `u${n}`,
    quantity: 1,
    status: 'PENDING_PAYMENT',
    submit_token: null,
    updatedAt: 0,
  });

  it('sold_out while units were never taken is a violation', () => {
    expect(judge([soldOut(T)], { stock: 2, orders: [order(1)] })).toContain("a room's sold_out is true");
  });

  it('sold_out once every unit is held passes', () => {
    expect(judge([soldOut(T)], { stock: 2, orders: [order(1), order(2)] })).toEqual([]);
  });
});

describe('room rules: tokens only against a valid pass', () => {
  const mint = (pass: Written['pass'], at: number, status: number): Written => ({
    kind: 'mint',
    buyer: 1,
    subject: 'token',
    outcome: status < 300 ? 'ok' : 'fail',
    status,
    pass,
    sentAt: at,
    answeredAt: at + 5,
  });

  it('a token issued without a pass, or with a pass expired seconds before, is a violation', () => {
    expect(judge([mint('none', T, 201)])).toEqual(['a room sale issues tokens only against a valid pass']);
    expect(judge([mint({ expiresAt: T - 3_000 }, T, 201)])).toEqual([
      'a room sale issues tokens only against a valid pass',
    ]);
  });

  it('refusals, an unexpired pass, and a sale whose room the admin removed pass', () => {
    expect(
      judge([mint('none', T, 403), mint({ expiresAt: T - 3_000 }, T, 403), mint({ expiresAt: T + 5_000 }, T, 201)]),
    ).toEqual([]);
    const removed: Written = {
      kind: 'room',
      buyer: -1,
      subject: 'waitingRoom=null',
      outcome: 'ok',
      status: 200,
      room: null,
      sentAt: T - 10_000,
      answeredAt: T - 9_990,
    };
    expect(judge([removed, mint('none', T, 201)])).toEqual([]);
  });
});

describe('MySQL holds no row the run did not make', () => {
  const made = { saleIds: new Set(['7']), userIds: new Set(['u1']) };

  it('rows of another sale are a violation', () => {
    const added = [{ table: 'sale_buyers', row: { sale_id: '12', user_id: 'u_someone' } }];
    expect(unexplainedRows(added, made, new Set()).map((v) => v.invariant)).toEqual([
      'MySQL holds no row the run did not make',
    ]);
  });

  it("a warm-up's sale left behind passes until an API start that began after its end swept it", () => {
    const added = [
      { table: 'sales', row: { id: '9' } },
      { table: 'sale_buyers', row: { sale_id: '9', user_id: 'warm-up-ab12-3' } },
    ];
    const endsAtMs = new Map([['9', T]]);
    expect(unexplainedRows(added, made, new Set(), { endsAtMs, lastLeftoverSweepAtMs: T - 5_000 })).toEqual([]);
    expect(
      unexplainedRows(added, made, new Set(), { endsAtMs, lastLeftoverSweepAtMs: T + WARM_UP_LEFTOVER_GRACE_MS - 1 }),
    ).toEqual([]);
    const leftBehind = unexplainedRows(added, made, new Set(), {
      endsAtMs,
      lastLeftoverSweepAtMs: T + WARM_UP_LEFTOVER_GRACE_MS + 1,
    });
    expect(leftBehind.map((v) => v.detail)).toEqual([
      expect.stringContaining('in sales'),
      expect.stringContaining('in sale_buyers'),
    ]);
  });

  it("the run's sale, its buyers' orders and payments pass", () => {
    const added = [
      { table: 'sales', row: { id: '7' } },
      { table: 'orders', row: { sale_id: '7', user_id: 'u1', order_no: 'S7-A' } },
      { table: 'payments', row: { order_no: 'S7-A' } },
      { table: 'stock_leases', row: { sale_id: '7' } },
    ];
    expect(unexplainedRows(added, made, new Set(['S7-A']))).toEqual([]);
  });
});
