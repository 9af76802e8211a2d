// The waiting room's buyer (room-buyer.ts) answer by answer: what it sends, how it reads a Ticket, waits
// out "retry later", joins again and stops; and the ETA error and percentiles it is judged with.
import { apiError, roomPlan } from './fixtures/room.ts';
import { ticketProblem } from './room-answers.ts';
import { advance, type Answer, arrive, requestFor, type RoomBuyer, tamper } from './room-buyer.ts';
import { etaErrorOf, etaPointErrorOf, percentile } from './waiting-room.ts';

describe('the buyer', () => {
  const at = (t: number, status: number, body: unknown, retryAfterSeconds?: number): Answer => ({
    status,
    body,
    sentAt: t,
    answeredAt: t + 10,
    retryAfterSeconds,
  });

  it('honours pollAfterMs, probes once it has a place, and buys with its pass', () => {
    const b = arrive(3, 0, true);
    expect(requestFor(b, roomPlan(10))).toEqual({
      endpoint: 'queue_join',
      method: 'POST',
      path: '/api/sales/42/queue',
      json: {},
      as: 3,
    });
    advance(
      b,
      at(0, 201, { state: 'waiting', opensAt: 'x', estimatedWaitSeconds: 12, pollAfterMs: 5000 }),
      roomPlan(10),
    );
    expect(b.joinedBeforeOpening).toBe(true);
    expect(b.preDrawEta).toEqual({ sentAt: 0, at: 10, seconds: 12 });
    expect(b.next).toEqual({ kind: 'poll', at: 5010 });
    advance(
      b,
      at(5010, 200, { state: 'waiting', position: 4, estimatedWaitSeconds: 2, pollAfterMs: 1000 }),
      roomPlan(10),
    );
    expect(b.eta).toEqual({ sentAt: 5010, at: 5020, seconds: 2 });
    // Its place known, the prober asks for a token without a pass, then polls when it was due.
    expect(b.next).toEqual({ kind: 'probe_no_pass', at: 5020 });
    advance(b, at(5020, 403, apiError('ADMISSION_REQUIRED')), roomPlan(10));
    expect(b.next).toEqual({ kind: 'poll', at: 6020 });
    advance(b, at(6020, 200, { state: 'admitted', pass: 'p4ss', pollAfterMs: 1000 }), roomPlan(10));
    expect(requestFor(b, roomPlan(10)).json).toEqual({ pass: 'p4ss' });
    advance(b, at(6030, 201, { token: 't0k', expiresAt: '' }), roomPlan(10));
    expect(requestFor(b, roomPlan(10))).toMatchObject({ path: '/api/sales/42/purchase', json: { token: 't0k' } });
    const bought = advance(b, at(6040, 202, { orderNo: 'S42-1', status: 'QUEUED' }), roomPlan(10));
    expect(bought).toEqual({
      kind: 'purchase',
      outcome: { kind: 'accepted', orderNo: 'S42-1', status: 202 },
      durationMs: 10,
    });
    expect(b.outcome).toBe('bought');
    // Then its pass, tampered with, and presented by the next buyer.
    expect(requestFor(b, roomPlan(10)).json).toEqual({ pass: tamper('p4ss') });
    advance(b, at(6050, 403, apiError('ADMISSION_REQUIRED')), roomPlan(10));
    expect(requestFor(b, roomPlan(10))).toMatchObject({ json: { pass: 'p4ss' }, as: 4 });
    advance(b, at(6060, 201, { token: 'leak', expiresAt: '' }), roomPlan(10));
    expect([b.probesRefused, b.tokensWithoutPass, b.next]).toEqual([2, 1, undefined]);
    expect(tamper('p4ss')).not.toBe('p4ss');
  });

  it('waits out 429 and 503, joins again after a 404, stops on an answer outside the contract', () => {
    const b = arrive(0, 0, false);
    advance(b, at(0, 503, apiError('UNAVAILABLE'), 2), roomPlan(1));
    expect(b.next).toEqual({ kind: 'join', at: 2010 });
    advance(
      b,
      at(2010, 201, { state: 'waiting', position: 9, estimatedWaitSeconds: 1, pollAfterMs: 3000 }),
      roomPlan(1),
    );
    advance(b, at(5020, 429, apiError('RATE_LIMITED'), 1), roomPlan(1));
    expect([b.pollsRateLimited, b.next]).toEqual([1, { kind: 'poll', at: 6030 }]);
    advance(b, at(6030, 404, apiError('NOT_FOUND')), roomPlan(1));
    expect([b.rejoins, b.next]).toEqual([1, { kind: 'join', at: 6040 }]);
    const broken = advance(b, at(6040, 201, { state: 'lost', pollAfterMs: 1 }), roomPlan(1));
    expect(broken).toMatchObject({ kind: 'unexpected', endpoint: 'queue_join', status: 201 });
    expect([b.outcome, b.broken, b.next]).toEqual(['broken', 'join: not a Ticket: state "lost"', undefined]);
  });

  it('reads a Ticket as docs/api.md describes it', () => {
    expect(ticketProblem({ state: 'waiting', pollAfterMs: 1000 })).toBeUndefined();
    expect(ticketProblem({ state: 'admitted', pollAfterMs: 1000 })).toBe('admitted without a pass');
    expect(ticketProblem({ state: 'waiting', position: 0, pollAfterMs: 1000 })).toBe('position 0');
    expect(ticketProblem({ state: 'sold_out' })).toBe('no pollAfterMs');
  });

  it('an ETA is judged by what can be proven: its request and the admission window, a second either way', () => {
    const b: RoomBuyer = {
      ...arrive(0, 0, false),
      eta: { sentAt: 0, at: 400, seconds: 10 },
      lastWaitingSentAt: 9_500,
      admittedAt: 10_400,
    };
    expect(etaErrorOf(b)).toBe(0);
    // Predicted at 5.4 s at the latest (+1 s), admitted after 9.5 s: 3.1 s off a wait of at most 10.4 s.
    expect(etaErrorOf({ ...b, eta: { sentAt: 0, at: 400, seconds: 5 } })).toBeCloseTo((9_500 - 6_400) / 10_400);
    // One point against the other (9,950 − 200 ms), no allowance: 10 s is 2.6 % off.
    expect(etaPointErrorOf(b)).toBeCloseTo(250 / 9_750);
  });

  it('nearest-rank percentiles', () => {
    expect(percentile([], 90)).toBeUndefined();
    expect(percentile([5, 1, 4, 2, 3], 50)).toBe(3);
    expect(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 90)).toBe(9);
  });
});
