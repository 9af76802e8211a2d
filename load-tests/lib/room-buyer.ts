// One buyer of a sale with a waiting room (docs/api.md "The waiting room"), as a state machine: what it
// sends next, and what it does with the answer. Pure — no k6 or Node import — so the k6 scenario
// (load-tests/waiting-room.ts, many buyers in one VU through http.batch) and the Node crowd
// (bench/room-crowd.mjs, 20,000 buyers on timers) drive the same buyers and record the same facts, which
// lib/waiting-room.ts then judges.
//
//   join → poll every pollAfterMs (a prober, once it has a place: asks for a token without a pass) →
//   admitted: token with the pass → purchase → (a prober: the pass tampered with; its pass presented by
//   another buyer) → done … or told sold_out / ended at a poll → done.
//
// The no-pass probe waits for the buyer's place: before the opening `409 SALE_NOT_STARTED` comes first
// in docs/api.md's order of errors, and would prove nothing.
import { ErrorCode } from '../../libs/contract/src/error-code.ts';
import type { Ticket } from '../../libs/contract/src/waiting-room.ts';
import type { PurchaseOutcome } from './api.ts';
import { type ExpectedPurchase, isObject, purchaseOutcome } from './answer-shapes.ts';
import { errorCode, retryDelayMs, retryLater, ticketProblem } from './room-answers.ts';

/** An HTTP answer as either driver saw it; times are epoch ms on the driver's clock. */
export interface Answer {
  status: number;
  /** The parsed JSON body, if any. */
  body: unknown;
  /** `retry-after`, in seconds, when the answer had one. */
  retryAfterSeconds?: number;
  /** When the request left (at the latest: the server saw it after this). */
  sentAt: number;
  /** When its answer was read (the server had answered before this). */
  answeredAt: number;
}

export type StepKind =
  'probe_no_pass' | 'join' | 'poll' | 'token' | 'purchase' | 'probe_tampered_pass' | 'probe_other_buyer';

/** The routes a room buyer calls, as lib/api.ts tags them. */
export type RoomEndpoint = 'queue_join' | 'queue_poll' | 'token' | 'purchase';

const ENDPOINT_OF: Record<StepKind, RoomEndpoint> = {
  probe_no_pass: 'token',
  join: 'queue_join',
  poll: 'queue_poll',
  token: 'token',
  purchase: 'purchase',
  probe_tampered_pass: 'token',
  probe_other_buyer: 'token',
};

export interface Step {
  kind: StepKind;
  /** Not before this (epoch ms). */
  at: number;
}

/** The request of a step: the driver adds the origin and the session of buyer `as`. */
export interface RoomRequest {
  endpoint: RoomEndpoint;
  method: 'GET' | 'POST';
  path: string;
  /** JSON body of a POST. */
  json?: unknown;
  /** Index of the buyer whose session signs the request (another buyer's for `probe_other_buyer`). */
  as: number;
}

export type BuyerOutcome =
  | 'bought'
  | 'told_sold_out'
  | 'told_ended'
  /** Admitted, then refused for good at the token or the purchase (410 SOLD_OUT, 409 LIMIT_REACHED…). */
  | 'refused'
  /** Still told "retry later" after the retry window: gave up. */
  | 'gave_up'
  /** An answer outside the contract stopped it. */
  | 'broken';

/** An `estimatedWaitSeconds`, and the request that brought it: the API computed it between the two instants. */
export interface Eta {
  sentAt: number;
  at: number;
  seconds: number;
}

/** Everything lib/waiting-room.ts judges a buyer on. Times are epoch ms. */
export interface RoomBuyer {
  index: number;
  /** Also checks that tokens are refused without its own valid pass. */
  prober: boolean;
  next?: Step;
  outcome?: BuyerOutcome;
  joinSentAt?: number;
  joinAnsweredAt?: number;
  /** Its join was answered before the draw (a waiting ticket without a position). */
  joinedBeforeOpening?: boolean;
  /** Joins again after a `404` (the room lost its ticket): its place no longer says anything. */
  rejoins: number;
  /** The ETA of a join answered before the draw: from the buyer's draw, which buyers joining later still move. */
  preDrawEta?: Eta;
  /** The ETA of its first ticket with a position (the join after the opening, or the first poll after the draw). */
  eta?: Eta;
  /** When the last request answered `waiting` left: the buyer was not admitted before this. */
  lastWaitingSentAt?: number;
  /** The `pollAfterMs` of the last ticket. */
  pollAfterMs?: number;
  polls: number;
  /** Polls answered `429` (sooner than half of pollAfterMs, or another limit). */
  pollsRateLimited: number;
  /** Answers `503` + `retry-after` to a join or a poll. */
  roomUnavailable: number;
  /** When the first `admitted` ticket was read: the buyer was admitted before this. */
  admittedAt?: number;
  pass?: string;
  /** When the first `sold_out` ticket was read, and the `pollAfterMs` it was polling at (none: told at its join). */
  toldSoldOutAt?: number;
  noticeIntervalMs?: number;
  toldEndedAt?: number;
  token?: string;
  /** The final purchase answer. */
  purchase?: { sentAt: number; answeredAt: number; outcome: PurchaseOutcome['kind'] };
  /** A token answered `410 SOLD_OUT` (admitted, then sold out before its token). */
  tokenSoldOutAt?: number;
  /** Probes answered `201`: a token issued without the buyer's own valid pass. */
  tokensWithoutPass: number;
  /** Probes answered `403 ADMISSION_REQUIRED`. */
  probesRefused: number;
  /** Probes answered `429`: another limit answered first, so they prove nothing either way. */
  probesInconclusive: number;
  /** A prober's poll, put off by its no-pass probe. */
  pollAt?: number;
  /** Until when a "retry later" token or purchase is sent again. */
  retryUntil?: number;
  /** What broke it (`outcome: 'broken'`). */
  broken?: string;
}

/** Something a driver counts in its own metrics (k6) or tallies (Node). */
export type RoomEvent =
  | { kind: 'purchase'; outcome: PurchaseOutcome; durationMs: number }
  | { kind: 'unexpected'; endpoint: RoomEndpoint; status: number; code: string; message: string };

export interface RoomPlan {
  saleId: string;
  /** Buyers in the run: `probe_other_buyer` borrows the next buyer's session. */
  buyers: number;
  /** What the sale's strategy answers an accepted purchase (answer-shapes.ts's expectedPurchase). */
  purchase: ExpectedPurchase;
  /** How long a token or purchase answered `429`/`503` + `retry-after` is sent again. */
  retryLaterMs: number;
}

/** A buyer arriving at `at`, to join. */
export function arrive(index: number, at: number, prober: boolean): RoomBuyer {
  return {
    index,
    prober,
    next: { kind: 'join', at },
    rejoins: 0,
    polls: 0,
    pollsRateLimited: 0,
    roomUnavailable: 0,
    tokensWithoutPass: 0,
    probesRefused: 0,
    probesInconclusive: 0,
  };
}

/**
 * A crowd of buyers, each arriving at its instant (epoch ms): the opening crowd, `early` buyers spread
 * evenly from `from` until `earlyUntil` (before the opening), then `late` buyers, `lateRate` a second
 * from the opening on. Every `proberEvery`-th buyer is a prober.
 */
export function arriveCrowd(o: {
  from: number;
  early: number;
  earlyUntil: number;
  opensAt: number;
  late: number;
  lateRate: number;
  proberEvery: number;
}): RoomBuyer[] {
  const spread = Math.max(0, o.earlyUntil - o.from);
  const early = Array.from({ length: o.early }, (_, i) => o.from + (spread * i) / Math.max(1, o.early));
  const late = Array.from({ length: o.late }, (_, k) => o.opensAt + ((k + 1) * 1000) / o.lateRate);
  return [...early, ...late].map((at, i) => arrive(i, at, i % o.proberEvery === o.proberEvery - 1));
}

/** A pass with one character of its middle changed: no longer what the API signed. */
export function tamper(pass: string): string {
  const i = Math.floor(pass.length / 2);
  const swapped = pass[i] === 'A' ? 'B' : 'A';
  return `${pass.slice(0, i)}${swapped}${pass.slice(i + 1)}`;
}

/** The request of the buyer's next step. */
export function requestFor(buyer: RoomBuyer, plan: RoomPlan): RoomRequest {
  const step = buyer.next;
  if (!step) throw new Error(`buyer ${buyer.index} has nothing left to send`);
  const sale = `/api/sales/${encodeURIComponent(plan.saleId)}`;
  const own = { endpoint: ENDPOINT_OF[step.kind], as: buyer.index };
  switch (step.kind) {
    case 'probe_no_pass':
      return { ...own, method: 'POST', path: `${sale}/tokens`, json: {} };
    case 'join':
      return { ...own, method: 'POST', path: `${sale}/queue`, json: {} };
    case 'poll':
      return { ...own, method: 'GET', path: `${sale}/queue` };
    case 'token':
      return { ...own, method: 'POST', path: `${sale}/tokens`, json: { pass: buyer.pass } };
    case 'purchase':
      return { ...own, method: 'POST', path: `${sale}/purchase`, json: { token: buyer.token } };
    case 'probe_tampered_pass':
      return { ...own, method: 'POST', path: `${sale}/tokens`, json: { pass: tamper(buyer.pass ?? '') } };
    case 'probe_other_buyer':
      return {
        ...own,
        method: 'POST',
        path: `${sale}/tokens`,
        json: { pass: buyer.pass },
        as: (buyer.index + 1) % Math.max(1, plan.buyers),
      };
  }
}

/** The buyer is done: nothing more to send. */
function stop(buyer: RoomBuyer, outcome: BuyerOutcome): void {
  buyer.outcome = outcome;
  buyer.next = undefined;
}

function unexpected(buyer: RoomBuyer, step: StepKind, answer: Answer, why?: string): RoomEvent {
  const code = errorCode(answer.body);
  const message = why ?? `HTTP ${answer.status}${code ? ` ${code}` : ''}`;
  stop(buyer, 'broken');
  buyer.broken = `${step}: ${message}`;
  return { kind: 'unexpected', endpoint: ENDPOINT_OF[step], status: answer.status, code, message };
}

/**
 * A token or a purchase told to come back later: sent again after `waitMs` while the buyer's retry window
 * lasts (it opens at the first such answer); past it, the buyer gives up. Whether it is sent again.
 */
function sendAgain(buyer: RoomBuyer, kind: 'token' | 'purchase', answer: Answer, waitMs: number, plan: RoomPlan) {
  buyer.retryUntil ??= answer.sentAt + plan.retryLaterMs;
  const at = answer.answeredAt + waitMs;
  if (at <= buyer.retryUntil) buyer.next = { kind, at };
  else stop(buyer, 'gave_up');
  return buyer.outcome !== 'gave_up';
}

function onTicket(buyer: RoomBuyer, step: StepKind, answer: Answer): RoomEvent | undefined {
  const problem = ticketProblem(answer.body);
  if (problem) return unexpected(buyer, step, answer, `not a Ticket: ${problem}`);
  const ticket = answer.body as unknown as Ticket;
  const at = answer.answeredAt;
  if (step === 'join') {
    buyer.joinSentAt ??= answer.sentAt;
    buyer.joinAnsweredAt ??= at;
    if (buyer.joinedBeforeOpening === undefined) {
      buyer.joinedBeforeOpening = ticket.state === 'waiting' && ticket.position === undefined;
      if (buyer.joinedBeforeOpening && ticket.estimatedWaitSeconds !== undefined) {
        buyer.preDrawEta = { sentAt: answer.sentAt, at, seconds: ticket.estimatedWaitSeconds };
      }
    }
  }
  const pollingAt = buyer.pollAfterMs;
  buyer.pollAfterMs = ticket.pollAfterMs;
  switch (ticket.state) {
    case 'waiting':
      buyer.lastWaitingSentAt = answer.sentAt;
      if (!buyer.eta && ticket.position !== undefined && ticket.estimatedWaitSeconds !== undefined) {
        buyer.eta = { sentAt: answer.sentAt, at, seconds: ticket.estimatedWaitSeconds };
      }
      // A ticket sold out, then waiting again: units came back (docs/api.md); it is waiting once more.
      buyer.next = { kind: 'poll', at: at + ticket.pollAfterMs };
      if (buyer.prober && ticket.position !== undefined && !probed(buyer)) {
        buyer.pollAt = buyer.next.at;
        buyer.next = { kind: 'probe_no_pass', at };
      }
      return undefined;
    case 'admitted':
      buyer.admittedAt ??= at;
      buyer.pass = ticket.pass;
      buyer.next = { kind: 'token', at };
      return undefined;
    case 'sold_out':
      if (buyer.toldSoldOutAt === undefined) {
        buyer.toldSoldOutAt = at;
        buyer.noticeIntervalMs = step === 'poll' ? pollingAt : undefined;
      }
      stop(buyer, 'told_sold_out');
      return undefined;
    case 'ended':
      buyer.toldEndedAt ??= at;
      stop(buyer, 'told_ended');
      return undefined;
  }
}

function probed(buyer: RoomBuyer): boolean {
  return buyer.probesRefused + buyer.tokensWithoutPass + buyer.probesInconclusive > 0;
}

function onProbe(buyer: RoomBuyer, step: StepKind, answer: Answer, next: Step | undefined): RoomEvent | undefined {
  const code = errorCode(answer.body);
  if (answer.status === 403 && code === ErrorCode.AdmissionRequired) buyer.probesRefused++;
  else if (answer.status === 201) buyer.tokensWithoutPass++;
  else if (
    answer.status === 429 ||
    answer.status === 410 ||
    (answer.status === 409 && code === ErrorCode.SaleNotStarted)
  ) {
    // A rule docs/api.md puts first answered (a limit, the sale sold out or ended): no token either.
    buyer.probesInconclusive++;
  } else return unexpected(buyer, step, answer);
  buyer.next = next;
  return undefined;
}

/**
 * Records the answer to the buyer's current step and sets its next step (none: done, `outcome` says
 * how). Returns what the driver should count.
 */
export function advance(buyer: RoomBuyer, answer: Answer, plan: RoomPlan): RoomEvent | undefined {
  const step = buyer.next;
  if (!step) throw new Error(`buyer ${buyer.index} had nothing in flight`);
  const at = answer.answeredAt;
  switch (step.kind) {
    case 'probe_no_pass':
      return onProbe(buyer, step.kind, answer, { kind: 'poll', at: Math.max(at, buyer.pollAt ?? at) });
    case 'probe_tampered_pass':
      return onProbe(buyer, step.kind, answer, { kind: 'probe_other_buyer', at });
    case 'probe_other_buyer':
      return onProbe(buyer, step.kind, answer, undefined);
    case 'join':
    case 'poll': {
      if (step.kind === 'poll') buyer.polls++;
      if ((step.kind === 'join' && answer.status === 201) || (step.kind === 'poll' && answer.status === 200)) {
        return onTicket(buyer, step.kind, answer);
      }
      if (step.kind === 'poll' && answer.status === 404) {
        // The room lost this ticket (Redis restarted without its data): join again, as docs/api.md says.
        buyer.rejoins++;
        buyer.next = { kind: 'join', at };
        return undefined;
      }
      if (retryLater(answer)) {
        if (answer.status === 429) buyer.pollsRateLimited++;
        else buyer.roomUnavailable++;
        buyer.next = { kind: step.kind, at: at + retryDelayMs(answer) };
        return undefined;
      }
      return unexpected(buyer, step.kind, answer);
    }
    case 'token': {
      const code = errorCode(answer.body);
      if (answer.status === 201 && isObject(answer.body) && typeof answer.body.token === 'string') {
        buyer.token = answer.body.token;
        buyer.retryUntil = undefined;
        buyer.next = { kind: 'purchase', at };
        return undefined;
      }
      if (answer.status === 410 && (code === ErrorCode.SoldOut || code === ErrorCode.SaleEnded)) {
        buyer.tokenSoldOutAt ??= code === ErrorCode.SoldOut ? at : undefined;
        stop(buyer, 'refused');
        return undefined;
      }
      if (retryLater(answer)) {
        sendAgain(buyer, 'token', answer, retryDelayMs(answer), plan);
        return undefined;
      }
      return unexpected(buyer, 'token', answer);
    }
    case 'purchase': {
      const outcome = purchaseOutcome(answer, plan.purchase);
      const durationMs = answer.answeredAt - answer.sentAt;
      if (outcome.kind === 'retry_later' || outcome.kind === 'not_started') {
        const wait = outcome.kind === 'retry_later' ? outcome.retryAfterSeconds * 1000 : 50;
        if (sendAgain(buyer, 'purchase', answer, wait, plan)) return { kind: 'purchase', outcome, durationMs };
      } else if (outcome.kind === 'accepted') {
        buyer.outcome = 'bought';
      } else if (outcome.kind === 'unexpected') {
        buyer.outcome = 'broken';
        buyer.broken = `purchase: ${outcome.message}`;
      } else {
        buyer.outcome = 'refused';
      }
      buyer.purchase = { sentAt: answer.sentAt, answeredAt: at, outcome: outcome.kind };
      // Then a prober tries its pass twice more: tampered with, and presented by another buyer.
      const probing = buyer.prober && outcome.kind !== 'unexpected';
      buyer.next = probing ? { kind: 'probe_tampered_pass', at } : undefined;
      return { kind: 'purchase', outcome, durationMs };
    }
  }
}
