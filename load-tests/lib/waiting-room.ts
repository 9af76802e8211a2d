// The waiting room's verdicts, from what every buyer saw (lib/room-buyer.ts records it). Pure: the k6
// scenario (load-tests/waiting-room.ts) judges its crowd with these functions inside its VU and hands the
// figures to its thresholds; the Node crowd (bench/room-crowd.mjs) judges its 20,000 buyers with the very
// same ones; waiting-room.spec.ts checks them on fixtures, and on altered copies that must fail.
//
// Every instant is known only within a window, and each verdict takes the side that cannot invent a
// failure: a buyer was admitted after its last request answered `waiting` left and before its first
// `admitted` answer was read — its admission window, one poll interval wide.
//
//   Correctness  no submit token without the buyer's own valid pass; every buyer still waiting at the
//                sell-out told `sold_out` within NOTICE_POLL_INTERVALS of its poll interval (or at its
//                join, joining later); no admitted buyer refused SOLD_OUT (never more shoppers than units
//                left); the sale sold out in the run (else nothing of this was measured).
//   Fairness     admissions in join order: no buyer who joined after the opening admitted while one who
//                had joined before it (after the opening) — or anyone of the opening crowd — was
//                provably still waiting; the ETA of a buyer's first ticket with a place within
//                ETA_ERROR_P90_PERCENT of its actual wait for 90 % of the buyers.
import type { Eta, RoomBuyer } from './room-buyer.ts';

/** A waiting buyer must hear `sold_out` within this many of its poll intervals after the sell-out. */
export const NOTICE_POLL_INTERVALS = 2;
/** The p90 of |ETA − actual wait| ÷ actual wait must stay below this. */
export const ETA_ERROR_P90_PERCENT = 25;
/**
 * `estimatedWaitSeconds` is in whole seconds: an admission within a second of the ETA's instant, on
 * either side, is no error.
 */
export const ETA_RESOLUTION_MS = 1000;

/** Nearest-rank percentile (p in 0..100) of `values`; undefined when there are none. */
export function percentile(values: readonly number[], p: number): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/**
 * The sell-out instant: the read of the purchase answer that took the last unit (the `stock`-th accepted
 * one), or the first `410 SOLD_OUT` to a token or a purchase, whichever came first; undefined when the
 * sale did not sell out.
 */
export function sellOutInstant(buyers: readonly RoomBuyer[], stock: number): number | undefined {
  const accepted = buyers
    .filter((b) => b.purchase?.outcome === 'accepted')
    .map((b) => b.purchase?.answeredAt ?? 0)
    .sort((a, b) => a - b);
  const refusals = buyers.flatMap((b) => [
    ...(b.purchase?.outcome === 'sold_out' ? [b.purchase.answeredAt] : []),
    ...(b.tokenSoldOutAt !== undefined ? [b.tokenSoldOutAt] : []),
  ]);
  const candidates = [...(accepted.length >= stock ? [accepted[stock - 1] as number] : []), ...refusals];
  return candidates.length > 0 ? candidates.reduce((a, b) => Math.min(a, b)) : undefined;
}

export interface Inversions {
  /** Pairs of buyers who joined after the opening, the later one admitted while the earlier provably waited. */
  inversions: number;
  /** Pairs (opening crowd, buyer who joined after the opening) with the latter admitted first. */
  aheadOfCrowd: number;
  /** Buyers overtaken at least once. */
  overtaken: number;
  /** Buyers who joined after the opening and were admitted: the admissions judged. */
  judged: number;
  /** The longest an overtaken buyer was provably still waiting after the one behind it was admitted (ms). */
  worstMs?: number;
}

/**
 * Admissions in join order. Buyer `i` joined before buyer `j` when `i`'s join was answered before `j`'s
 * was sent (the API saw them in that order). `j` was admitted before `i` for certain when `j` read its
 * `admitted` ticket before `i`'s last `waiting` answer was even asked for — the poll intervals on either
 * side never count as an inversion. The opening crowd's order is drawn at random, so among it there is
 * no order to keep; but every one of it is ahead of whoever joins after the opening.
 */
export function admissionInversions(buyers: readonly RoomBuyer[]): Inversions {
  // A rejoin starts at the back again: only a buyer who joined once has a place in the order.
  const joined = buyers.filter((b) => b.joinSentAt !== undefined && b.joinAnsweredAt !== undefined && b.rejoins === 0);
  const after = joined.filter((b) => b.joinedBeforeOpening === false);
  const crowd = joined.filter((b) => b.joinedBeforeOpening === true);
  const admittedAfter = after.filter((b) => b.admittedAt !== undefined);
  const overtaken = new Set<number>();
  let inversions = 0;
  let aheadOfCrowd = 0;
  let worstMs: number | undefined;
  const overtakes = (i: RoomBuyer, j: RoomBuyer): boolean => {
    const gap = (i.lastWaitingSentAt ?? -Infinity) - (j.admittedAt as number);
    if (gap <= 0) return false;
    overtaken.add(i.index);
    worstMs = Math.max(worstMs ?? 0, gap);
    return true;
  };
  for (const j of admittedAfter) {
    for (const i of after) {
      if (i !== j && (i.joinAnsweredAt as number) < (j.joinSentAt as number) && overtakes(i, j)) inversions++;
    }
    for (const i of crowd) if (overtakes(i, j)) aheadOfCrowd++;
  }
  return { inversions, aheadOfCrowd, overtaken: overtaken.size, judged: admittedAfter.length, worstMs };
}

/** The buyer's admission window after an ETA, if it was admitted after it without joining again. */
function admissionAfter(buyer: RoomBuyer, eta: Eta | undefined): { from: number; to: number } | undefined {
  if (!eta || buyer.admittedAt === undefined || buyer.lastWaitingSentAt === undefined || buyer.rejoins > 0) {
    return undefined;
  }
  return { from: buyer.lastWaitingSentAt, to: buyer.admittedAt };
}

/**
 * |ETA − actual| ÷ actual wait (a fraction), provable only: the API computed the ETA while its request was
 * in flight, so the instant it predicts lies between the request's departure + ETA and its answer + ETA,
 * widened by a second on either side (the ETA is in whole seconds); the admission lies in its window. The
 * error is the gap between the two intervals, over the longest wait the buyer may have had (from the
 * ETA's request to the read of `admitted`, at least a second). Undefined when the buyer was never
 * admitted after such an ETA (or joined again).
 */
export function etaErrorOf(buyer: RoomBuyer, eta = buyer.eta): number | undefined {
  const admission = admissionAfter(buyer, eta);
  if (!eta || !admission) return undefined;
  const earliestPredicted = eta.sentAt + eta.seconds * 1000 - ETA_RESOLUTION_MS;
  const latestPredicted = eta.at + eta.seconds * 1000 + ETA_RESOLUTION_MS;
  const miss = Math.max(0, admission.from - latestPredicted, earliestPredicted - admission.to);
  return miss / Math.max(ETA_RESOLUTION_MS, admission.to - eta.sentAt);
}

/**
 * The same ETA as one point against another, with no allowance: from the middle of its request to the
 * middle of the admission window. What the error looks like when the poll granularity, the answers'
 * latency and the rounding to whole seconds count as error too. Reported beside the judged one, never
 * judged: on a wait of a few seconds they alone exceed 25 %.
 */
export function etaPointErrorOf(buyer: RoomBuyer): number | undefined {
  const { eta } = buyer;
  const admission = admissionAfter(buyer, eta);
  if (!eta || !admission) return undefined;
  const actual = Math.max(ETA_RESOLUTION_MS, (admission.from + admission.to) / 2 - (eta.sentAt + eta.at) / 2);
  return Math.abs(eta.seconds * 1000 - actual) / actual;
}

export interface Notices {
  /** Buyers waiting at the sell-out, or joining after it: each must be told. */
  owed: number;
  /** Told later than NOTICE_POLL_INTERVALS of their poll interval after the sell-out (or their join). */
  late: number;
  /** Waiting at the end of the run, never told. */
  neverTold: number;
  /** Provably admitted after the sell-out (no unit comes back in these runs): told `admitted` instead. */
  admittedAfter: number;
  /** Delays in poll intervals, of the buyers told. */
  intervals: number[];
}

/**
 * Every buyer waiting at `sellOutAt` — joined, not admitted by then, not broken off on an answer outside
 * the contract — must read `sold_out` within NOTICE_POLL_INTERVALS × the `pollAfterMs` it was polling at.
 * The delay counts from the sell-out, or from the join of a buyer joining after it (whose join should
 * answer `sold_out` at once: 0 intervals).
 */
export function soldOutNotices(buyers: readonly RoomBuyer[], sellOutAt: number): Notices {
  const notices: Notices = { owed: 0, late: 0, neverTold: 0, admittedAfter: 0, intervals: [] };
  for (const b of buyers) {
    if (b.joinSentAt === undefined || b.outcome === 'broken') continue;
    // Admitted, unless provably after the sell-out (its last `waiting` asked for after it): not owed.
    if (b.admittedAt !== undefined && (b.lastWaitingSentAt ?? -Infinity) <= sellOutAt) continue;
    notices.owed++;
    if (b.admittedAt !== undefined) notices.admittedAfter++;
    else if (b.toldSoldOutAt !== undefined) {
      const delay = Math.max(0, b.toldSoldOutAt - Math.max(sellOutAt, b.joinSentAt));
      const intervals = b.noticeIntervalMs ? delay / b.noticeIntervalMs : 0;
      notices.intervals.push(intervals);
      if (intervals > NOTICE_POLL_INTERVALS) notices.late++;
    } else if (b.toldEndedAt === undefined) notices.neverTold++;
  }
  return notices;
}

const defined = (values: Array<number | undefined>): number[] => values.filter((v): v is number => v !== undefined);
const percent = (fractions: number[], p: number): number | undefined => {
  const value = percentile(fractions, p);
  return value === undefined ? undefined : value * 100;
};

/**
 * Every figure both drivers print and k6's thresholds judge, from a run's buyers, the sale's stock and its
 * opening instant (epoch ms). Times in ms after the opening, errors in %; undefined where nothing was
 * measured.
 */
export function roomFigures(buyers: readonly RoomBuyer[], stock: number, opensAt: number) {
  const sellOutAt = sellOutInstant(buyers, stock);
  const notices = sellOutAt === undefined ? undefined : soldOutNotices(buyers, sellOutAt);
  const order = admissionInversions(buyers);
  const eta = defined(buyers.map((b) => etaErrorOf(b)));
  const point = defined(buyers.map((b) => etaPointErrorOf(b)));
  const preDraw = defined(buyers.map((b) => (b.preDrawEta ? etaErrorOf(b, b.preDrawEta) : undefined)));
  const purchases = buyers.flatMap((b) => (b.purchase ? [b.purchase.answeredAt - b.purchase.sentAt] : []));
  const count = (keep: (b: RoomBuyer) => boolean) => buyers.filter(keep).length;
  const sum = (of: (b: RoomBuyer) => number) => buyers.reduce((total, b) => total + of(b), 0);
  const intervals = notices?.intervals ?? [];
  return {
    buyers: buyers.length,
    joinedBeforeOpening: count((b) => b.joinedBeforeOpening === true),
    joinedAfterOpening: count((b) => b.joinedBeforeOpening === false),
    admitted: count((b) => b.admittedAt !== undefined),
    bought: count((b) => b.outcome === 'bought'),
    toldSoldOut: count((b) => b.toldSoldOutAt !== undefined),
    /** Admitted, then refused `410 SOLD_OUT` at the token or the purchase: more shoppers than units let in. */
    admittedThenSoldOut: count(
      (b) => b.admittedAt !== undefined && (b.tokenSoldOutAt !== undefined || b.purchase?.outcome === 'sold_out'),
    ),
    /** Stopped by an answer outside the contract. */
    broken: count((b) => b.outcome === 'broken'),
    gaveUp: count((b) => b.outcome === 'gave_up'),
    rejoined: count((b) => b.rejoins > 0),
    polls: sum((b) => b.polls),
    pollsRateLimited: sum((b) => b.pollsRateLimited),
    roomUnavailable: sum((b) => b.roomUnavailable),
    probes: sum((b) => b.probesRefused + b.tokensWithoutPass + b.probesInconclusive),
    probesRefused: sum((b) => b.probesRefused),
    probesInconclusive: sum((b) => b.probesInconclusive),
    tokensWithoutPass: sum((b) => b.tokensWithoutPass),
    /** 1 when the sale sold out in the run (the notices were measured), else 0. */
    soldOut: sellOutAt === undefined ? 0 : 1,
    sellOutAfterOpeningMs: sellOutAt === undefined ? undefined : sellOutAt - opensAt,
    noticesOwed: notices?.owed ?? 0,
    noticesLate: notices?.late ?? 0,
    noticesNeverTold: notices?.neverTold ?? 0,
    admittedAfterSellOut: notices?.admittedAfter ?? 0,
    /** Late, never told or admitted after the sell-out: Correctness's number. */
    noticesFailed: notices ? notices.late + notices.neverTold + notices.admittedAfter : 0,
    noticeMaxIntervals: intervals.length > 0 ? intervals.reduce((a, b) => Math.max(a, b)) : undefined,
    noticeP50Intervals: percentile(intervals, 50),
    inversions: order.inversions,
    aheadOfCrowd: order.aheadOfCrowd,
    overtaken: order.overtaken,
    inversionsJudged: order.judged,
    worstOvertakingMs: order.worstMs,
    etaSamples: eta.length,
    /** 1 when no buyer's ETA could be judged (nobody admitted after a ticket with a place), else 0. */
    etaUnmeasured: eta.length === 0 ? 1 : 0,
    etaErrorP50: percent(eta, 50),
    etaErrorP90: percent(eta, 90),
    /** The ETA against the middle of the admission window, no allowance (etaPointErrorOf): reported only. */
    etaPointErrorP50: percent(point, 50),
    etaPointErrorP90: percent(point, 90),
    preDrawEtaSamples: preDraw.length,
    preDrawEtaErrorP50: percent(preDraw, 50),
    preDrawEtaErrorP90: percent(preDraw, 90),
    purchases: purchases.length,
    purchaseP95Ms: percentile(purchases, 95),
  };
}

export type RoomFigures = ReturnType<typeof roomFigures>;

/** The figures of a run without buyers: every key, undefined where there is nothing to measure. */
const NO_FIGURES = roomFigures([], 1, 0);

/** The keys of RoomFigures, each a k6 gauge `room_<snake_case>` (load-tests/waiting-room.ts). */
export const ROOM_FIGURE_KEYS = Object.keys(NO_FIGURES) as Array<keyof RoomFigures>;

/** `etaErrorP90` → `room_eta_error_p90`. */
export function roomMetric(key: keyof RoomFigures): string {
  return `room_${key.replace(/[A-Z0-9]+/g, (part) => `_${part.toLowerCase()}`)}`;
}

/**
 * The figures back from k6's end-of-test data: the gauges the VU set; one it did not set is 0 if it is a
 * count, undefined if it is a measurement.
 */
export function roomFiguresFromSummary(data: K6SummaryData): RoomFigures {
  const figures: Record<string, number | undefined> = {};
  for (const key of ROOM_FIGURE_KEYS) {
    const value = data.metrics[roomMetric(key)]?.values['value'];
    const unset = NO_FIGURES[key] === undefined ? undefined : 0;
    figures[key] = typeof value === 'number' && Number.isFinite(value) ? value : unset;
  }
  return figures as RoomFigures;
}

/** Buyers' admissions per second over time (each at the read of its `admitted` ticket), from `originMs`. */
export function admissionsPerBucket(buyers: readonly RoomBuyer[], originMs: number, bucketMs: number): number[] {
  const counts: number[] = [];
  for (const b of buyers) {
    if (b.admittedAt === undefined) continue;
    const i = Math.max(0, Math.floor((b.admittedAt - originMs) / bucketMs));
    while (counts.length <= i) counts.push(0);
    counts[i] = (counts[i] ?? 0) + 1;
  }
  return counts.map((c) => (c * 1000) / bucketMs);
}
