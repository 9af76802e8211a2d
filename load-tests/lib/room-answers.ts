// What a waiting-room buyer reads in an answer (docs/api.md): the answer itself, a Ticket's shape, a
// "retry later" (a purchase's outcome: answer-shapes.ts). Pure, as the buyer's state machine
// (room-buyer.ts) that uses it.
import { ErrorCode } from '../../libs/contract/src/error-code.ts';
import { TICKET_STATES } from '../../libs/contract/src/waiting-room.ts';
import { errorOf, isObject, parseJson, retryAfterSeconds } from './answer-shapes.ts';
import type { Answer } from './room-buyer.ts';

/** An HTTP answer as either driver reads it off the wire (`text`: the body, `retryAfter`: the header). */
export function readAnswer(raw: {
  status: number;
  text: unknown;
  retryAfter: unknown;
  sentAt: number;
  answeredAt: number;
}): Answer {
  return {
    status: raw.status,
    body: parseJson(raw.text),
    retryAfterSeconds: retryAfterSeconds(raw.retryAfter),
    sentAt: raw.sentAt,
    answeredAt: raw.answeredAt,
  };
}

export function errorCode(body: unknown): string {
  return errorOf(body).code;
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
