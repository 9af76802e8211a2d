// The waiting room's figures (waiting-room.ts) in words: what the k6 report, its Correctness facts and
// the Node crowd's verdict say of them.
import { NOTICE_POLL_INTERVALS, type RoomFigures } from './waiting-room.ts';

/** `12,345.6`: by hand, as k6's runtime reads toLocaleString's locale as a radix. */
export function n(value: number | undefined, digits = 0): string {
  if (value === undefined) return '—';
  const [whole = '', fraction] = String(Math.round(value * 10 ** digits) / 10 ** digits).split('.');
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return fraction === undefined ? grouped : `${grouped}.${fraction}`;
}
const pct = (value: number | undefined): string => (value === undefined ? '—' : `${n(value, value < 10 ? 1 : 0)} %`);
const seconds = (ms: number | undefined): string => (ms === undefined ? '—' : `${n(ms / 1000, 1)} s`);

/**
 * Correctness's facts about the room, each under the k6 gauge whose threshold holds it (`room_judged`, a
 * counter, only k6 has: the VU that drives the crowd finished and judged it).
 */
const CORRECTNESS_FACTS: Record<string, (f: RoomFigures) => string | undefined> = {
  room_judged: () => 'the waiting-room crowd did not finish: nothing was judged (see the errors above)',
  room_tokens_without_pass: (f) =>
    f.tokensWithoutPass > 0
      ? `${f.tokensWithoutPass} submit token(s) issued without the buyer's own valid pass`
      : undefined,
  room_admitted_then_sold_out: (f) =>
    f.admittedThenSoldOut > 0
      ? `${f.admittedThenSoldOut} admitted buyer(s) refused SOLD_OUT: more shoppers let in than units left`
      : undefined,
  room_sold_out: (f) =>
    f.soldOut === 0 ? 'the sale did not sell out in the run: the sold-out notices were not measured' : undefined,
  room_notices_failed: (f) => {
    if (f.noticesFailed === 0) return undefined;
    const parts = [
      f.noticesLate > 0
        ? `${f.noticesLate} told sold out after more than ${NOTICE_POLL_INTERVALS} poll intervals (max ${n(f.noticeMaxIntervals, 1)})`
        : '',
      f.noticesNeverTold > 0 ? `${f.noticesNeverTold} never told` : '',
      f.admittedAfterSellOut > 0 ? `${f.admittedAfterSellOut} admitted after the sell-out` : '',
    ].filter(Boolean);
    return `waiting buyers not told in time: ${parts.join(', ')}`;
  },
};

/** The fact behind a failed `room_*` Correctness threshold. */
export function roomCorrectnessFact(metric: string, f: RoomFigures): string | undefined {
  return CORRECTNESS_FACTS[metric]?.(f);
}

/** Correctness's facts about the room when they fail; empty when they hold. */
export function roomCorrectnessFailures(f: RoomFigures): string[] {
  return Object.entries(CORRECTNESS_FACTS)
    .filter(([metric]) => metric !== 'room_judged')
    .map(([, fact]) => fact(f))
    .filter((fact): fact is string => fact !== undefined);
}

/** What Correctness says of the room when it holds. */
export function roomCorrectnessNotes(f: RoomFigures): string {
  return (
    `no token without a pass (${f.probesRefused} probe(s) refused 403 ADMISSION_REQUIRED); ` +
    `every waiting buyer told sold out within ${NOTICE_POLL_INTERVALS} poll intervals ` +
    `(${f.noticesOwed} buyers, max ${n(f.noticeMaxIntervals, 2)})`
  );
}

/** What Fairness says of the join order when it holds. */
export function roomOrderNote(f: RoomFigures): string {
  return `0 admission inversions (${f.inversionsJudged} admissions after the opening judged)`;
}

/** The figures, a few lines, for the text report and the Node crowd alike. */
export function roomLines(f: RoomFigures): string[] {
  return [
    `Waiting room: ${n(f.buyers)} buyers (${n(f.joinedBeforeOpening)} joined before the opening, ${n(f.joinedAfterOpening)} after); ` +
      `${n(f.admitted)} admitted, ${n(f.bought)} bought, ${n(f.toldSoldOut)} told sold out` +
      (f.broken + f.gaveUp + f.rejoined > 0
        ? `; ${f.broken} broken off, ${f.gaveUp} gave up, ${f.rejoined} joined again`
        : ''),
    `  join order: ${n(f.inversions)} inversions among ${n(f.inversionsJudged)} admissions after the opening, ` +
      `${n(f.aheadOfCrowd)} ahead of the opening crowd` +
      (f.overtaken > 0 ? ` (${n(f.overtaken)} buyers overtaken, worst by ${seconds(f.worstOvertakingMs)})` : ''),
    `  ETA error at the first ticket with a place: p50 ${pct(f.etaErrorP50)}, p90 ${pct(f.etaErrorP90)} over ${n(f.etaSamples)} buyers ` +
      `(against the middle of the admission window, no allowance: p50 ${pct(f.etaPointErrorP50)}, p90 ${pct(f.etaPointErrorP90)}); ` +
      `before the draw (reported, not judged) p50 ${pct(f.preDrawEtaErrorP50)}, p90 ${pct(f.preDrawEtaErrorP90)} over ${n(f.preDrawEtaSamples)}`,
    f.soldOut
      ? `  sold out ${seconds(f.sellOutAfterOpeningMs)} after the opening; ${n(f.noticesOwed)} waiting buyers told within ` +
        `p50 ${n(f.noticeP50Intervals, 2)}, max ${n(f.noticeMaxIntervals, 2)} poll intervals; ${n(f.noticesLate)} late, ` +
        `${n(f.noticesNeverTold)} never told, ${n(f.admittedAfterSellOut)} admitted after it`
      : '  not sold out in the run: sold-out notices not measured',
    `  ${n(f.polls)} polls (${n(f.pollsRateLimited)} answered 429, ${n(f.roomUnavailable)} joins/polls 503); ` +
      `token probes: ${n(f.probesRefused)} refused 403, ${n(f.tokensWithoutPass)} issued a token, ${n(f.probesInconclusive)} inconclusive; ` +
      `purchase p95 ${f.purchaseP95Ms === undefined ? '—' : `${n(f.purchaseP95Ms, 1)} ms`} (${n(f.purchases)} purchases)`,
  ];
}
