// What a waiting-room buyer reads in an answer (docs/api.md): the answer itself, a Ticket's shape, a
// purchase's outcome, a "retry later". Pure, as the buyer's state machine (room-buyer.ts) that uses it.
import { ErrorCode } from '../../libs/contract/src/error-code.ts';
import { TICKET_STATES } from '../../libs/contract/src/waiting-room.ts';
import type { PurchaseOutcome } from './api.ts';
import { isObject, parseJson } from './answer-shapes.ts';
import type { Answer, RoomPlan } from './room-buyer.ts';

/**
 * An HTTP answer as either driver reads it off the wire (`text`: the body, `retryAfter`: the header); a
 * `retry-after` that is not a positive number of seconds counts as none.
 */
export function readAnswer(raw: {
  status: number;
  text: unknown;
  retryAfter: unknown;
  sentAt: number;
  answeredAt: number;
}): Answer {
  const retryAfter = Number(raw.retryAfter);
  return {
    status: raw.status,
    body: parseJson(raw.text),
    retryAfterSeconds: Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : undefined,
    sentAt: raw.sentAt,
    answeredAt: raw.answeredAt,
  };
}

export function errorCode(body: unknown): string {
  return isObject(body) && isObject(body.error) && typeof body.error.code === 'string' ? body.error.code : '';
}

function isCount(value: unknown): boolean {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}

/** A Ticket as docs/api.md describes it, or why not. */
export function ticketProblem(body: unknown): string | undefined {
  if (!isObject(body)) return 'the body is not a Ticket';
  if (!(TICKET_STATES as readonly unknown[]).includes(body.state)) return `state ${JSON.stringify(body.state)}`;
  if (!isCount(body.pollAfterMs)) return 'no pollAfterMs';
  if (body.state === 'admitted' && (typeof body.pass !== 'string' || body.pass === ''))
    return 'admitted without a pass';
  if (body.state === 'waiting') {
    if (body.position !== undefined && !(Number.isInteger(body.position) && (body.position as number) >= 1)) {
      return `position ${JSON.stringify(body.position)}`;
    }
    if (body.estimatedWaitSeconds !== undefined && !isCount(body.estimatedWaitSeconds)) {
      return `estimatedWaitSeconds ${JSON.stringify(body.estimatedWaitSeconds)}`;
    }
  }
  return undefined;
}

/** `429 RATE_LIMITED` or `503 UNAVAILABLE` with `retry-after`: nothing happened, send it again later. */
export function retryLater(answer: Answer): boolean {
  const code = errorCode(answer.body);
  return (
    (answer.status === 429 && code === ErrorCode.RateLimited) ||
    (answer.status === 503 && code === ErrorCode.Unavailable)
  );
}

export function retryDelayMs(answer: Answer): number {
  const seconds = answer.retryAfterSeconds;
  return seconds !== undefined && Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : 1000;
}

/** A purchase answer against docs/api.md, as lib/api.ts's classifyPurchase reads a k6 response. */
export function purchaseOutcome(answer: Answer, plan: RoomPlan): PurchaseOutcome {
  const code = errorCode(answer.body);
  const body = answer.body;
  if (answer.status === plan.purchaseStatus) {
    if (isObject(body) && typeof body.orderNo === 'string' && body.orderNo !== '') {
      return { kind: 'accepted', orderNo: body.orderNo, status: answer.status };
    }
    return { kind: 'unexpected', status: answer.status, code, message: 'the body has no orderNo' };
  }
  if (answer.status === 410 && code === ErrorCode.SoldOut) return { kind: 'sold_out', status: 410 };
  if (answer.status === 409 && code === ErrorCode.LimitReached) return { kind: 'limit_reached', status: 409 };
  if (answer.status === 409 && code === ErrorCode.SaleNotStarted) return { kind: 'not_started', status: 409 };
  if (retryLater(answer)) {
    return {
      kind: 'retry_later',
      status: answer.status as 429 | 503,
      code,
      retryAfterSeconds: retryDelayMs(answer) / 1000,
    };
  }
  return { kind: 'unexpected', status: answer.status, code, message: `HTTP ${answer.status} ${code}`.trim() };
}
