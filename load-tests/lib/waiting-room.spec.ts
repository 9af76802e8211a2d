// The waiting room's buyer (room-buyer.ts) and verdicts (waiting-room.ts). A small fair room — FIFO after
// an opening draw, a fixed admission rate, sold_out at every poll after the last unit — answers the real
// buyer state machine, so the fixture is what a healthy run records; altered copies of it (an inversion,
// a buyer told sold out too late, ETAs far off, a token issued without a pass…) must fail. Then the k6
// report of a recorded run (fixtures/waiting-room-pass.json, k6 1.3 against the real stack), and copies
// of it whose room thresholds failed.
import recordedRun from './fixtures/waiting-room-pass.json';
import { buildHtmlReport } from './report-html.ts';
import { buildReport, type ReportOptions } from './report.ts';
import { ROOM_CORRECTNESS_THRESHOLDS, roomFairnessBounds, roomReport } from './room-report.ts';
import { verdicts } from './verdict.ts';
import { judgeRoom, type RoomAudit } from './room-verdict.ts';
import { roomLines } from './room-words.ts';
import type { Answer, RoomBuyer, RoomPlan } from './room-buyer.ts';
import { advance, arrive, requestFor, tamper } from './room-buyer.ts';
import { ticketProblem } from './room-answers.ts';
import {
  admissionInversions,
  etaErrorOf,
  etaPointErrorOf,
  percentile,
  ROOM_FIGURE_KEYS,
  roomFigures,
  roomFiguresFromSummary,
  roomMetric,
  sellOutInstant,
  soldOutNotices,
} from './waiting-room.ts';

/** A seeded generator, so the fixture is the same every run. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state / 2_147_483_648;
  };
}

interface RoomShape {
  early: number;
  late: number;
  /** ms between two late arrivals. */
  lateEveryMs: number;
  stock: number;
  admitPerSecond: number;
  opensAt: number;
}

const SHAPE: RoomShape = { early: 120, late: 120, lateEveryMs: 100, stock: 160, admitPerSecond: 20, opensAt: 10_000 };
const LATENCY_MS = 5;
const plan = (buyers: number): RoomPlan => ({ saleId: '42', buyers, purchaseStatus: 202, retryLaterMs: 15_000 });
const error = (code: string) => ({ error: { code, message: code } });

/** The fair room: answers each request at the instant it arrives. */
class FairRoom {
  private drawn = false;
  private readonly crowd: number[] = [];
  private readonly line: number[] = [];
  private readonly admitted = new Set<number>();
  private shopping = 0;
  private units: number;
  private nextAdmissionAt: number;
  private readonly rng = random(7);

  constructor(private readonly shape: RoomShape) {
    this.units = shape.stock;
    this.nextAdmissionAt = shape.opensAt;
  }

  private catchUp(t: number): void {
    if (t >= this.shape.opensAt && !this.drawn) {
      this.drawn = true;
      const drawn = [...this.crowd].sort(() => this.rng() - 0.5);
      this.line.unshift(...drawn);
    }
    while (this.drawn && this.nextAdmissionAt <= t) {
      if (this.line.length > 0 && this.shopping < this.units) {
        this.admitted.add(this.line.shift() as number);
        this.shopping++;
      }
      this.nextAdmissionAt += 1000 / this.shape.admitPerSecond;
    }
  }

  private ticket(buyer: number, t: number): { status: number; body: unknown } {
    if (this.admitted.has(buyer))
      return { status: 200, body: { state: 'admitted', pass: `pass-${buyer}`, pollAfterMs: 1000 } };
    if (this.units === 0) return { status: 200, body: { state: 'sold_out', pollAfterMs: 1000 } };
    if (!this.drawn) {
      const untilOpening = this.shape.opensAt - t;
      return {
        status: 200,
        body: {
          state: 'waiting',
          opensAt: new Date(this.shape.opensAt).toISOString(),
          estimatedWaitSeconds: Math.ceil(untilOpening / 1000 + this.crowd.length / 2 / this.shape.admitPerSecond),
          waiting: this.crowd.length,
          pollAfterMs: Math.min(10_000, Math.max(1000, untilOpening + 200)),
        },
      };
    }
    const position = this.line.indexOf(buyer) + 1;
    return {
      status: 200,
      body: {
        state: 'waiting',
        position,
        estimatedWaitSeconds: Math.ceil(position / this.shape.admitPerSecond),
        pollAfterMs: position <= this.shape.admitPerSecond ? 1000 : Math.min(10_000, 1000 + 20 * position),
      },
    };
  }

  answer(buyer: RoomBuyer, t: number): { status: number; body: unknown } {
    this.catchUp(t);
    const request = requestFor(buyer, plan(this.shape.early + this.shape.late));
    const json = request.json as { pass?: string; token?: string } | undefined;
    switch (buyer.next?.kind) {
      case 'join': {
        if (this.units > 0 && !this.admitted.has(buyer.index)) (this.drawn ? this.line : this.crowd).push(buyer.index);
        const answer = this.ticket(buyer.index, t);
        return { status: 201, body: answer.body };
      }
      case 'poll':
        return this.ticket(buyer.index, t);
      case 'probe_no_pass':
      case 'probe_tampered_pass':
      case 'probe_other_buyer':
      case 'token': {
        const own = json?.pass === `pass-${request.as}` && this.admitted.has(request.as);
        return own
          ? { status: 201, body: { token: `token-${buyer.index}`, expiresAt: '' } }
          : { status: 403, body: error('ADMISSION_REQUIRED') };
      }
      case 'purchase':
        if (this.units === 0) return { status: 410, body: error('SOLD_OUT') };
        this.units--;
        this.shopping--;
        return { status: 202, body: { orderNo: `S42-${buyer.index}`, status: 'QUEUED' } };
      default:
        throw new Error('nothing to answer');
    }
  }
}

/** A whole run against the fair room: the records a healthy run leaves. */
function fairRun(shape: RoomShape = SHAPE): RoomBuyer[] {
  const room = new FairRoom(shape);
  const early = Array.from({ length: shape.early }, (_, i) =>
    arrive(i, (i * (shape.opensAt - 2000)) / shape.early, i % 10 === 0),
  );
  const late = Array.from({ length: shape.late }, (_, k) =>
    arrive(shape.early + k, shape.opensAt + 300 + k * shape.lateEveryMs, (shape.early + k) % 10 === 0),
  );
  const buyers = [...early, ...late];
  for (let steps = 0; steps < 100_000; steps++) {
    let due: RoomBuyer | undefined;
    for (const b of buyers) if (b.next && (!due || b.next.at < (due.next?.at ?? Infinity))) due = b;
    if (!due?.next) return buyers;
    const sentAt = due.next.at;
    const { status, body } = room.answer(due, sentAt);
    advance(due, { status, body, sentAt, answeredAt: sentAt + LATENCY_MS }, plan(buyers.length));
  }
  throw new Error('the run did not end');
}

const copy = (buyers: RoomBuyer[]): RoomBuyer[] => JSON.parse(JSON.stringify(buyers)) as RoomBuyer[];
const AUDIT: RoomAudit = {
  ok: true,
  oversoldPeak: 0,
  duplicateOrders: 0,
  lostReservations: 0,
  held: SHAPE.stock,
  drained: true,
};
const BOUNDS = { purchaseP95Ms: 500 };

describe('the fair room: what a healthy run records', () => {
  const buyers = fairRun();
  const figures = roomFigures(buyers, SHAPE.stock, SHAPE.opensAt);

  it('every buyer joined, the stock sold out, the rest were told', () => {
    expect(figures.buyers).toBe(240);
    expect(figures.joinedBeforeOpening).toBe(120);
    expect(figures.joinedAfterOpening).toBe(120);
    expect(figures.bought).toBe(SHAPE.stock);
    expect(figures.admitted).toBe(SHAPE.stock);
    expect(figures.toldSoldOut).toBe(240 - SHAPE.stock);
    expect(figures.broken + figures.gaveUp + figures.noticesNeverTold).toBe(0);
    expect(figures.soldOut).toBe(1);
    // 120 of the crowd, then 40 of the later buyers, at 20 a second.
    expect(figures.sellOutAfterOpeningMs).toBeGreaterThan(7_500);
    expect(figures.sellOutAfterOpeningMs).toBeLessThan(9_000);
  });

  it('both verdicts pass, and say why', () => {
    expect(figures.inversions + figures.aheadOfCrowd).toBe(0);
    expect(figures.inversionsJudged).toBe(40);
    expect(figures.etaSamples).toBeGreaterThan(100);
    expect(figures.etaErrorP90).toBeLessThan(25);
    expect(figures.noticesOwed).toBe(80);
    expect(figures.noticeMaxIntervals).toBeLessThanOrEqual(1.1);
    expect(figures.probesRefused).toBeGreaterThan(20);
    expect(figures.tokensWithoutPass).toBe(0);
    const verdict = judgeRoom(figures, AUDIT, BOUNDS);
    expect(verdict.correctness.reason).toMatch(
      /^0 oversold, audit clean \(held 160\); no token without a pass \(\d+ probe\(s\) refused 403 ADMISSION_REQUIRED\); every waiting buyer told sold out within 2 poll intervals \(80 buyers, max /,
    );
    expect(verdict.fairness.reason).toMatch(
      /^0 admission inversions \(40 admissions after the opening judged\), ETA error p90 .* < 25 %, purchase p95 5 ms < 500 ms$/,
    );
    expect(verdict.pass).toBe(true);
  });

  it('prints its figures in a few lines', () => {
    const lines = roomLines(figures);
    expect(lines[0]).toBe(
      'Waiting room: 240 buyers (120 joined before the opening, 120 after); 160 admitted, 160 bought, 80 told sold out',
    );
    expect(lines[1]).toBe(
      '  join order: 0 inversions among 40 admissions after the opening, 0 ahead of the opening crowd',
    );
    expect(lines.join('\n')).toContain('80 waiting buyers told within');
    expect(roomLines({ ...figures, buyers: 20_000, polls: 1_234_567.8 }).join('\n')).toMatch(
      /20,000 buyers[^]*1,234,568 polls/,
    );
  });

  it('survives the trip through k6: every figure as a gauge, read back from the end-of-test data', () => {
    const metrics: Record<string, K6SummaryMetric> = {};
    for (const key of ROOM_FIGURE_KEYS) {
      const value = figures[key];
      if (value !== undefined)
        metrics[roomMetric(key)] = { type: 'gauge', contains: 'default', values: { value, min: value, max: value } };
    }
    const data = { metrics } as unknown as K6SummaryData;
    expect(roomFiguresFromSummary(data)).toEqual(JSON.parse(JSON.stringify(figures)));
    expect(roomMetric('etaErrorP90')).toBe('room_eta_error_p90');
    expect(roomMetric('admittedThenSoldOut')).toBe('room_admitted_then_sold_out');
  });
});

describe('altered copies of the healthy run must fail', () => {
  const healthy = fairRun();
  const judge = (buyers: RoomBuyer[]) => judgeRoom(roomFigures(buyers, SHAPE.stock, SHAPE.opensAt), AUDIT, BOUNDS);
  const afterOpening = (buyers: RoomBuyer[]) =>
    buyers
      .filter((b) => b.joinedBeforeOpening === false && b.admittedAt !== undefined)
      .sort((a, b) => (a.joinSentAt ?? 0) - (b.joinSentAt ?? 0));

  it('a later joiner admitted while an earlier one still waited: an inversion', () => {
    const buyers = copy(healthy);
    const [first, second] = afterOpening(buyers);
    if (!first || !second || first.lastWaitingSentAt === undefined) throw new Error('fixture too small');
    // The second one read `admitted` before the first one's last `waiting` poll left.
    second.admittedAt = first.lastWaitingSentAt - 1;
    const order = admissionInversions(buyers);
    expect(order.inversions).toBe(1);
    expect(order.overtaken).toBe(1);
    const verdict = judge(buyers);
    expect(verdict.fairness.pass).toBe(false);
    expect(verdict.fairness.reason).toBe('1 admission inversion(s) among buyers who joined after the opening');
    expect(verdict.correctness.pass).toBe(true);
  });

  it('an overtaking within the poll windows is not one: only a provable one counts', () => {
    const buyers = copy(healthy);
    const [first, second] = afterOpening(buyers);
    if (!first || !second || first.lastWaitingSentAt === undefined) throw new Error('fixture too small');
    // Read `admitted` just after the first one's last `waiting` poll left: either may have been first.
    second.admittedAt = first.lastWaitingSentAt + 1;
    expect(admissionInversions(buyers).inversions).toBe(0);
  });

  it('a buyer who joined after the opening admitted ahead of the opening crowd', () => {
    const buyers = copy(healthy);
    const crowdMember = buyers.find(
      (b) => b.joinedBeforeOpening && b.toldSoldOutAt === undefined && b.lastWaitingSentAt !== undefined,
    );
    const [late] = afterOpening(buyers);
    if (!crowdMember || !late || crowdMember.lastWaitingSentAt === undefined) throw new Error('fixture too small');
    late.admittedAt = crowdMember.lastWaitingSentAt - 1;
    expect(admissionInversions(buyers).aheadOfCrowd).toBeGreaterThanOrEqual(1);
    expect(judge(buyers).fairness.reason).toMatch(/admission\(s\) ahead of a buyer of the opening crowd still waiting/);
  });

  it('a waiting buyer told sold out three poll intervals after the sell-out', () => {
    const buyers = copy(healthy);
    const sellOutAt = sellOutInstant(buyers, SHAPE.stock) as number;
    const told = buyers.find((b) => b.toldSoldOutAt !== undefined && b.noticeIntervalMs !== undefined);
    if (!told || told.noticeIntervalMs === undefined) throw new Error('fixture too small');
    told.toldSoldOutAt = sellOutAt + 3 * told.noticeIntervalMs;
    const notices = soldOutNotices(buyers, sellOutAt);
    expect(notices.late).toBe(1);
    expect(notices.maxIntervals).toBeCloseTo(3);
    const verdict = judge(buyers);
    expect(verdict.correctness.pass).toBe(false);
    expect(verdict.correctness.reason).toBe(
      'waiting buyers not told in time: 1 told sold out after more than 2 poll intervals (max 3)',
    );
  });

  it('a waiting buyer never told, and one admitted after the sell-out', () => {
    const buyers = copy(healthy);
    const sellOutAt = sellOutInstant(buyers, SHAPE.stock) as number;
    const [silent, admitted] = buyers.filter((b) => b.toldSoldOutAt !== undefined && b.noticeIntervalMs !== undefined);
    if (!silent || !admitted) throw new Error('fixture too small');
    delete silent.toldSoldOutAt;
    silent.outcome = undefined;
    // Still `waiting` at a poll that left after the sell-out, `admitted` at the next one.
    delete admitted.toldSoldOutAt;
    admitted.lastWaitingSentAt = sellOutAt + 100;
    admitted.admittedAt = sellOutAt + 1100;
    const notices = soldOutNotices(buyers, sellOutAt);
    expect([notices.neverTold, notices.admittedAfter]).toEqual([1, 1]);
    expect(judge(buyers).correctness.reason).toBe(
      'waiting buyers not told in time: 1 never told, 1 admitted after the sell-out',
    );
  });

  it('ETAs three times the actual wait: the p90 error far above 25 %', () => {
    const buyers = copy(healthy);
    for (const b of buyers) if (b.eta) b.eta.seconds = b.eta.seconds * 3 + 6;
    const f = roomFigures(buyers, SHAPE.stock, SHAPE.opensAt);
    expect(f.etaErrorP90).toBeGreaterThan(100);
    expect(judge(buyers).fairness.reason).toMatch(/^ETA error p90 \d+ % ≥ 25 %/);
  });

  it('a token issued without a pass', () => {
    const buyers = copy(healthy);
    const prober = buyers.find((b) => b.prober);
    if (!prober) throw new Error('fixture too small');
    prober.tokensWithoutPass = 1;
    const verdict = judge(buyers);
    expect(verdict.correctness.pass).toBe(false);
    expect(verdict.correctness.reason).toBe("1 submit token(s) issued without the buyer's own valid pass");
  });

  it('a sale that did not sell out: the notices were not measured, which fails', () => {
    const buyers = fairRun({ ...SHAPE, stock: 1000 });
    const f = roomFigures(buyers, 1000, SHAPE.opensAt);
    expect(f.soldOut).toBe(0);
    expect(judgeRoom(f, { ...AUDIT, held: 240 }, BOUNDS).correctness.reason).toContain(
      'the sale did not sell out in the run',
    );
  });

  it('an oversold audit, a slow purchase', () => {
    const f = roomFigures(healthy, SHAPE.stock, SHAPE.opensAt);
    expect(judgeRoom(f, { ...AUDIT, oversoldPeak: 3, ok: false }, BOUNDS).correctness.reason).toMatch(
      /^OVERSOLD 3 unit\(s\); audit not clean/,
    );
    expect(judgeRoom(f, AUDIT, { purchaseP95Ms: 4 }).fairness.reason).toBe('purchase p95 5 ms ≥ 4 ms');
  });
});

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
    expect(requestFor(b, plan(10))).toEqual({
      endpoint: 'queue_join',
      method: 'POST',
      path: '/api/sales/42/queue',
      json: {},
      as: 3,
    });
    advance(b, at(0, 201, { state: 'waiting', opensAt: 'x', estimatedWaitSeconds: 12, pollAfterMs: 5000 }), plan(10));
    expect(b.joinedBeforeOpening).toBe(true);
    expect(b.preDrawEta).toEqual({ sentAt: 0, at: 10, seconds: 12 });
    expect(b.next).toEqual({ kind: 'poll', at: 5010 });
    advance(b, at(5010, 200, { state: 'waiting', position: 4, estimatedWaitSeconds: 2, pollAfterMs: 1000 }), plan(10));
    expect(b.eta).toEqual({ sentAt: 5010, at: 5020, seconds: 2 });
    // Its place known, the prober asks for a token without a pass, then polls when it was due.
    expect(b.next).toEqual({ kind: 'probe_no_pass', at: 5020 });
    advance(b, at(5020, 403, error('ADMISSION_REQUIRED')), plan(10));
    expect(b.next).toEqual({ kind: 'poll', at: 6020 });
    advance(b, at(6020, 200, { state: 'admitted', pass: 'p4ss', pollAfterMs: 1000 }), plan(10));
    expect(requestFor(b, plan(10)).json).toEqual({ pass: 'p4ss' });
    advance(b, at(6030, 201, { token: 't0k', expiresAt: '' }), plan(10));
    expect(requestFor(b, plan(10))).toMatchObject({ path: '/api/sales/42/purchase', json: { token: 't0k' } });
    const bought = advance(b, at(6040, 202, { orderNo: 'S42-1', status: 'QUEUED' }), plan(10));
    expect(bought).toEqual({
      kind: 'purchase',
      outcome: { kind: 'accepted', orderNo: 'S42-1', status: 202 },
      durationMs: 10,
      final: true,
    });
    expect(b.outcome).toBe('bought');
    // Then its pass, tampered with, and presented by the next buyer.
    expect(requestFor(b, plan(10)).json).toEqual({ pass: tamper('p4ss') });
    advance(b, at(6050, 403, error('ADMISSION_REQUIRED')), plan(10));
    expect(requestFor(b, plan(10))).toMatchObject({ json: { pass: 'p4ss' }, as: 4 });
    advance(b, at(6060, 201, { token: 'leak', expiresAt: '' }), plan(10));
    expect([b.probesRefused, b.tokensWithoutPass, b.next]).toEqual([2, 1, undefined]);
    expect(tamper('p4ss')).not.toBe('p4ss');
  });

  it('waits out 429 and 503, joins again after a 404, stops on an answer outside the contract', () => {
    const b = arrive(0, 0, false);
    advance(b, at(0, 503, error('UNAVAILABLE'), 2), plan(1));
    expect(b.next).toEqual({ kind: 'join', at: 2010 });
    advance(b, at(2010, 201, { state: 'waiting', position: 9, estimatedWaitSeconds: 1, pollAfterMs: 3000 }), plan(1));
    advance(b, at(5020, 429, error('RATE_LIMITED'), 1), plan(1));
    expect([b.pollsRateLimited, b.next]).toEqual([1, { kind: 'poll', at: 6030 }]);
    advance(b, at(6030, 404, error('NOT_FOUND')), plan(1));
    expect([b.rejoins, b.next]).toEqual([1, { kind: 'join', at: 6040 }]);
    const broken = advance(b, at(6040, 201, { state: 'lost', pollAfterMs: 1 }), plan(1));
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

describe('the k6 report of a recorded run (k6 1.3, 600 buyers, the real stack)', () => {
  const options: ReportOptions = {
    name: 'waiting-room',
    config: { baseUrl: 'http://localhost:3710', latencyGates: true, resultsDir: 'load-tests/results' },
    latencyBounds: [
      ...roomFairnessBounds(25),
      { label: 'purchase p95', metric: 'purchase_duration', stat: 'p(95)', below: 500 },
      { label: 'every room request p95', metric: 'http_req_duration{phase:room}', stat: 'p(95)', below: 500 },
    ],
    load: '300 buyers before the opening, 300 after',
    timelineBucketSeconds: 2,
    ...roomReport(15),
    details: (data) => roomLines(roomFiguresFromSummary(data)),
  };
  const recorded = () => JSON.parse(JSON.stringify(recordedRun)) as K6SummaryData;
  const judge = (data: K6SummaryData) =>
    verdicts(data, { latencyBounds: options.latencyBounds, latencyGates: true, passNotes: options.passNotes });
  /** The run had gauge `metric` been `value`, and its threshold judged it as k6 would. */
  const withGauge = (metric: string, value: number, ok: boolean): K6SummaryData => {
    const data = recorded();
    const gauge = data.metrics[metric];
    if (!gauge?.thresholds) throw new Error(`${metric} has no threshold in the fixture`);
    gauge.values['value'] = value;
    for (const source of Object.keys(gauge.thresholds)) gauge.thresholds[source] = { ok };
    return data;
  };

  it('carries every room threshold, and both verdicts pass with the room in their reasons', () => {
    for (const metric of Object.keys(ROOM_CORRECTNESS_THRESHOLDS))
      expect(recorded().metrics[metric]?.thresholds).toBeDefined();
    expect(roomFiguresFromSummary(recorded())).toMatchObject({
      buyers: 600,
      bought: 400,
      inversionsJudged: 100,
      noticesOwed: 200,
    });
    const v = judge(recorded());
    expect(v.correctness.reason).toBe(
      '0 oversold, audit clean (held 400), every answer in the contract (400 purchase answers); no token without a ' +
        'pass (128 probe(s) refused 403 ADMISSION_REQUIRED); every waiting buyer told sold out within 2 poll ' +
        'intervals (200 buyers, max 1)',
    );
    expect(v.latency.reason).toBe(
      '0 admission inversions (100 admissions after the opening judged), ETA error p90 0 % < 25 %, purchase p95 ' +
        '25 ms < 500 ms, every room request p95 20 ms < 500 ms',
    );
    expect(v.pass).toBe(true);
  });

  it('a token issued without a pass fails Correctness, naming it', () => {
    const v = judge(withGauge('room_tokens_without_pass', 2, false));
    expect(v.correctness).toMatchObject({
      pass: false,
      reason: "2 submit token(s) issued without the buyer's own valid pass",
    });
    expect(v.pass).toBe(false);
  });

  it('buyers told sold out late fail Correctness; a crowd that never finished too', () => {
    const late = withGauge('room_notices_failed', 3, false);
    late.metrics['room_notices_late']!.values['value'] = 3;
    late.metrics['room_notice_max_intervals']!.values['value'] = 4.2;
    expect(judge(late).correctness.reason).toBe(
      'waiting buyers not told in time: 3 told sold out after more than 2 poll intervals (max 4.2)',
    );
    const unfinished = recorded();
    unfinished.metrics['room_judged'] = {
      type: 'counter',
      contains: 'default',
      values: { count: 0, rate: 0 },
      thresholds: { 'count>=1': { ok: false } },
    };
    expect(judge(unfinished).correctness.reason).toMatch(/^the waiting-room crowd did not finish/);
  });

  it('an inversion fails Fairness, which the headline names and the exit code follows', () => {
    const data = withGauge('room_inversions', 3, false);
    const v = judge(data);
    expect(v.correctness.pass).toBe(true);
    expect(v.latency).toMatchObject({ pass: false, reason: 'admission inversions 3' });
    const report = buildReport(data, options, new Date('2026-11-27T19:24:37Z'));
    expect(report).toContain('Fairness:    FAIL — admission inversions 3');
    expect(report).toContain('Result:      FAIL (k6 exits 99: fairness failed and gates)');
  });

  it('an ETA error p90 over its bound fails Fairness', () => {
    expect(judge(withGauge('room_eta_error_p90', 41, false)).latency.reason).toBe('ETA error p90 41 % ≥ 25 %');
  });

  it('the HTML page charts the room and the admissions, the opening and the sell-out marked', () => {
    const html = buildHtmlReport(recorded(), options, new Date('2026-11-27T19:24:37Z'));
    expect(html).toContain('<td>Fairness</td><td><b class="pass">PASS</b></td>');
    expect(html).toContain('<figcaption>Waiting room <small>(buyers, sampled once a second)</small>');
    expect(html).toContain('<figcaption>Admissions <small>(per second)</small>');
    expect(html).toContain('<span class="mark">1 the opening</span> · <span class="mark">2 sold out</span>');
    expect(html.match(/<svg /g)).toHaveLength(8); // four charts, each drawn for a wide and a narrow page
  });
});
