// The waiting room's verdicts (waiting-room.ts, room-verdict.ts). A small fair room — FIFO after an
// opening draw, a fixed admission rate, sold_out at every poll after the last unit — answers the real
// buyer state machine, so the fixture is what a healthy run records; altered copies of it (an inversion,
// a buyer told sold out too late, ETAs far off, a token issued without a pass…) must fail.
import { apiError, roomPlan } from './fixtures/room.ts';
import { advance, arrive, requestFor, type RoomBuyer } from './room-buyer.ts';
import { judgeRoom, type RoomAudit, roomSummary } from './room-verdict.ts';
import { roomLines } from './room-words.ts';
import {
  admissionInversions,
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
    const request = requestFor(buyer, roomPlan(this.shape.early + this.shape.late));
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
          : { status: 403, body: apiError('ADMISSION_REQUIRED') };
      }
      case 'purchase':
        if (this.units === 0) return { status: 410, body: apiError('SOLD_OUT') };
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
    advance(due, { status, body, sentAt, answeredAt: sentAt + LATENCY_MS }, roomPlan(buyers.length));
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
      /^0 admission inversions \(40 admissions after the opening judged\), ETA error p90 .* < 25 %, purchase p95 5.0 ms < 500 ms$/,
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
    expect(roomFiguresFromSummary(roomSummary(figures))).toEqual(JSON.parse(JSON.stringify(figures)));
    // A crowd that never finished set no gauge: its counts read 0, its measurements nothing.
    const unset = roomFiguresFromSummary({ metrics: {} } as unknown as K6SummaryData);
    expect(unset).toMatchObject({ buyers: 0, soldOut: 0, etaUnmeasured: 0, noticesFailed: 0 });
    expect([unset.etaErrorP90, unset.sellOutAfterOpeningMs, unset.purchaseP95Ms]).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
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
    expect(verdict.fairness.reason).toBe('admission inversions 1');
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
    expect(judge(buyers).fairness.reason).toMatch(/^admissions ahead of the opening crowd [1-9]/);
  });

  it('a waiting buyer told sold out three poll intervals after the sell-out', () => {
    const buyers = copy(healthy);
    const sellOutAt = sellOutInstant(buyers, SHAPE.stock) as number;
    const told = buyers.find((b) => b.toldSoldOutAt !== undefined && b.noticeIntervalMs !== undefined);
    if (!told || told.noticeIntervalMs === undefined) throw new Error('fixture too small');
    told.toldSoldOutAt = sellOutAt + 3 * told.noticeIntervalMs;
    const notices = soldOutNotices(buyers, sellOutAt);
    expect(notices.late).toBe(1);
    expect(Math.max(...notices.intervals)).toBeCloseTo(3);
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
    expect(judge(buyers).fairness.reason).toMatch(/^ETA error p90 [\d.]+ % ≥ 25 %/);
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
    expect(judgeRoom(f, AUDIT, { purchaseP95Ms: 4 }).fairness.reason).toBe('purchase p95 5.0 ms ≥ 4.0 ms');
  });
});
