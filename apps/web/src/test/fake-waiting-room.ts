import { http, HttpResponse } from 'msw';
import type { Ticket } from '@flash-sale/contract';
import { server } from './server';

export type RoomRequest = 'join' | 'poll';

/** One request the fake room was sent: a join (`POST`) or a poll (`GET`), and when (ms, `Date.now()`). */
export interface RoomCall {
  kind: RoomRequest;
  at: number;
}

/**
 * A scripted waiting room for one sale (docs/api.md "The waiting room"): `answer` gets each request's
 * kind and its index among all of them (0 = the first) and returns the ticket, or a whole Response (a
 * 404, a 429…). Every request is recorded in `calls`, in order.
 */
export function fakeWaitingRoom(saleId: string, answer: (kind: RoomRequest, index: number) => Ticket | Response) {
  const calls: RoomCall[] = [];
  const respond = (kind: RoomRequest) => {
    calls.push({ kind, at: Date.now() });
    const answered = answer(kind, calls.length - 1);
    if (answered instanceof Response) return answered;
    return HttpResponse.json(answered, { status: kind === 'join' ? 201 : 200 });
  };
  server.use(
    http.post(`/api/sales/${saleId}/queue`, () => respond('join')),
    http.get(`/api/sales/${saleId}/queue`, () => respond('poll')),
  );
  return { calls, kinds: () => calls.map((call) => call.kind) };
}

/** Answers the requests with `answers` in order, the last one repeating. */
export function inOrder(...answers: (Ticket | (() => Response))[]) {
  return (_kind: RoomRequest, index: number): Ticket | Response => {
    const answer = answers[Math.min(index, answers.length - 1)];
    if (answer === undefined) throw new Error('inOrder needs at least one answer');
    return typeof answer === 'function' ? answer() : answer;
  };
}
