// The waiting room's crowd, driven from one VU: every buyer is a lib/room-buyer.ts state machine, and
// each turn of the loop sends, with one `http.batch`, every step that is due — joins, polls at
// `pollAfterMs`, tokens, purchases, probes — plus, once a second, the admin's sample of the room. One VU
// holds every buyer's record, so the verdicts that compare buyers (the join order, the sell-out instant)
// are computed here, with lib/waiting-room.ts, and handed to k6 as gauges its thresholds judge.
import { sleep } from 'k6';
import http, { type ObjectBatchRequest, type RefinedResponse } from 'k6/http';
import { Counter, Gauge } from 'k6/metrics';
import type { Api, Session } from './api.ts';
import { purchaseGaveUp, recordPurchase, recordUnexpected } from './metrics.ts';
import { readAnswer } from './room-answers.ts';
import {
  advance,
  type Answer,
  type RoomBuyer,
  type RoomEndpoint,
  type RoomEvent,
  type RoomPlan,
  requestFor,
} from './room-buyer.ts';
import { recordSample, recordTimeline } from './timeline.ts';
import { admissionsPerBucket, ROOM_FIGURE_KEYS, type RoomFigures, roomMetric } from './waiting-room.ts';

/** One sample when the crowd's VU finished and judged it: a Correctness threshold (`count>=1`). */
export const roomJudged = new Counter('room_judged');
const figureGauges = ROOM_FIGURE_KEYS.map((key) => [key, new Gauge(roomMetric(key))] as const);

/** The series sampled over the run (lib/timeline.ts), charted in the HTML report. */
export const ROOM_SERIES = ['waiting', 'shopping', 'admissions', 'measured_admissions'] as const;

/** The contract's answers of each route (the rest count in k6's `http_req_failed`). */
const EXPECTED: Record<RoomEndpoint, ReturnType<typeof http.expectedStatuses>> = {
  queue_join: http.expectedStatuses(201, 429, 503),
  queue_poll: http.expectedStatuses(200, 404, 429, 503),
  token: http.expectedStatuses(201, 403, 409, 410, 429, 503),
  purchase: http.expectedStatuses(201, 202, 409, 410, 429, 503),
};

/** Signs `count` guests in, `parallel` at a time; the ones refused are counted and left out. */
export function signInCrowd(
  api: Api,
  count: number,
  name: (i: number) => string,
  parallel: number,
  tags: Record<string, string>,
): Session[] {
  const sessions: Session[] = [];
  for (let start = 0; start < count; start += parallel) {
    const requests: ObjectBatchRequest[] = [];
    for (let i = start; i < Math.min(count, start + parallel); i++) requests.push(api.guestRequest(name(i), tags));
    for (const res of http.batch(requests) as Array<RefinedResponse<'text'>>) {
      recordTimeline(res.timings.duration);
      const session = api.sessionOf(res);
      if (session.ok) sessions.push(session.value);
      else recordUnexpected('auth_guest', session, tags);
    }
  }
  return sessions;
}

function answerOf(res: RefinedResponse<'text'>, sentAt: number): Answer {
  const t = res.timings;
  return readAnswer({
    status: res.status,
    text: res.body,
    retryAfter: res.headers['Retry-After'],
    sentAt,
    answeredAt: sentAt + t.blocked + t.connecting + t.tls_handshaking + t.sending + t.waiting + t.receiving,
  });
}

function count(event: RoomEvent | undefined, tags: Record<string, string>): void {
  if (event?.kind === 'purchase') recordPurchase(event.outcome, event.durationMs, tags);
  if (event?.kind === 'unexpected') recordUnexpected(event.endpoint, event, tags);
}

export interface CrowdRun {
  api: Api;
  /** Buyer `i` signs its requests with `sessions[i]`. */
  sessions: Session[];
  plan: RoomPlan;
  /** The buyers, arrived (lib/room-buyer.ts's arriveCrowd), in index order. */
  buyers: RoomBuyer[];
  /** At most this many requests in one batch. */
  parallel: number;
  /** Buyers still waiting then stop (and count as never told, if the sale sold out). */
  deadline: number;
  admin: { token: string };
  tags: Record<string, string>;
}

/** Runs the crowd until every buyer is done, or the deadline, recording what each one saw in its record. */
export function runCrowd(run: CrowdRun): void {
  const { api, sessions, plan, buyers, tags } = run;
  const gaveUp = new Set<number>();
  let nextSampleAt = Date.now();
  for (;;) {
    const now = Date.now();
    const pending = buyers.filter((b) => b.next !== undefined);
    if (pending.length === 0 || now >= run.deadline) return;
    const due = pending
      .filter((b) => (b.next?.at ?? Infinity) <= now)
      .sort((a, b) => (a.next?.at ?? 0) - (b.next?.at ?? 0))
      .slice(0, run.parallel);
    const sampling = now >= nextSampleAt;
    if (due.length === 0 && !sampling) {
      const soonest = pending.reduce((at, b) => Math.min(at, b.next?.at ?? Infinity), nextSampleAt);
      sleep(Math.min(0.25, Math.max(0.005, (soonest - now) / 1000)));
      continue;
    }
    const requests = due.map((b): ObjectBatchRequest => {
      const request = requestFor(b, plan);
      return {
        method: request.method,
        url: `${api.baseUrl}${request.path}`,
        body: request.json === undefined ? null : JSON.stringify(request.json),
        params: api.params(request.endpoint, sessions[request.as]?.token, {
          responseType: 'text',
          responseCallback: EXPECTED[request.endpoint],
          tags,
        }),
      };
    });
    if (sampling) {
      requests.push(api.roomStateRequest(run.admin.token, plan.saleId));
      while (nextSampleAt <= now) nextSampleAt += 1000;
    }
    const sentAt = Date.now();
    const responses = http.batch(requests) as Array<RefinedResponse<'text'>>;
    due.forEach((buyer, i) => {
      const res = responses[i] as RefinedResponse<'text'>;
      recordTimeline(res.timings.duration);
      count(advance(buyer, answerOf(res, sentAt), plan), tags);
      if (buyer.outcome === 'gave_up' && !gaveUp.has(buyer.index)) {
        gaveUp.add(buyer.index);
        purchaseGaveUp.add(1, tags);
      }
    });
    if (sampling) sample(api, responses[due.length] as RefinedResponse<'text'>, sentAt, tags);
  }
}

function sample(api: Api, res: RefinedResponse<'text'>, at: number, tags: Record<string, string>): void {
  recordTimeline(res.timings.duration);
  const state = api.roomState(res);
  if (!state) {
    recordUnexpected('queue_state', { status: res.status, code: '', message: 'not a WaitingRoomState' }, tags);
    return;
  }
  recordSample('waiting', state.waiting, at);
  recordSample('shopping', state.shopping, at);
  recordSample('measured_admissions', state.measuredAdmitPerSecond, at);
}

/** Hands the figures to k6 (a gauge each) and the buyers' admissions per second to the timeline. */
export function recordRoomFigures(
  figures: RoomFigures,
  buyers: readonly RoomBuyer[],
  timeline: { originMs: number; bucketSeconds: number },
): void {
  for (const [key, gauge] of figureGauges) {
    const value = figures[key];
    if (value !== undefined) gauge.add(value);
  }
  const bucketMs = timeline.bucketSeconds * 1000;
  admissionsPerBucket(buyers, timeline.originMs, bucketMs).forEach((perSecond, i) =>
    recordSample('admissions', perSecond, timeline.originMs + i * bucketMs),
  );
  roomJudged.add(1);
}
