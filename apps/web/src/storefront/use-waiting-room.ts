import { ErrorCode, type Session, type Ticket, type TicketState } from '@flash-sale/contract';
import { useCallback, useEffect, useRef, useState } from 'react';
import { ApiError } from '../api/api-error';
import { api } from '../api/endpoints';
import { serverClock } from '../api/server-clock';
import { sessionStore } from '../session/session-store';

/** The buyer's place in a sale's waiting room, as the page shows it. */
export interface RoomView {
  /**
   * `joining` until the first ticket, then the ticket's state. `gone`: the sale has no room any more
   * (`409 NO_WAITING_ROOM`, the admin removed it): the buyer buys directly.
   */
  phase: 'joining' | TicketState | 'gone';
  ticket?: Ticket;
  /** The first position seen in this turn in the line: the progress bar measures from it. */
  firstPosition?: number;
  /** The buyer's turn ran out before they bought (pass expired, or refused): they are back in the line. */
  turnEnded: boolean;
  /** The last request got no answer worth having (offline, 5xx) and is retried by itself. */
  problem?: { error: unknown; retryInSeconds: number };
  /** A refusal that retrying would not change (the sale is gone, say): polling has stopped. */
  failed?: unknown;
}

export interface WaitingRoom extends RoomView {
  /**
   * Joins again from scratch: after `403 ADMISSION_REQUIRED` (the pass is no longer good, `turnEnded`)
   * or, after a failure, when the buyer asks to try again.
   */
  rejoin: (turnEnded: boolean) => void;
}

/** While sold out, how often the page's own sale figures are looked at for a unit that came back. */
const UNITS_CHECK_MS = 1_000;
/** Backing off from a failure that came without `retry-after`: 1, 2, 4… seconds, at most this. */
const LONGEST_BACKOFF_MS = 30_000;
/** After the pass expires, the next poll comes this much later, so the server has seen it expire too. */
const PASS_EXPIRY_MARGIN_MS = 500;

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });

/** What a new ticket makes of the view: progress is measured from the first position of each turn in the line. */
function withTicket(room: RoomView, ticket: Ticket): RoomView {
  const backInLine = room.phase === 'admitted' && ticket.state === 'waiting';
  let firstPosition = backInLine ? undefined : room.firstPosition;
  if (ticket.state === 'waiting' && ticket.position !== undefined) {
    firstPosition = Math.max(firstPosition ?? 0, ticket.position);
  }
  const turnEnded = ticket.state === 'admitted' ? false : room.turnEnded || backInLine;
  return { phase: ticket.state, ticket, firstPosition, turnEnded };
}

/** When to ask about the ticket next: its `pollAfterMs`, or, once admitted, when the pass has run out. */
function nextPollIn(ticket: Ticket): number {
  if (ticket.state === 'admitted' && ticket.passExpiresAt) {
    const untilExpiry = Date.parse(ticket.passExpiresAt) - serverClock.now() + PASS_EXPIRY_MARGIN_MS;
    return Math.max(ticket.pollAfterMs, untilExpiry);
  }
  return ticket.pollAfterMs;
}

type Request = 'join' | 'poll';
type AfterFailure = { retry: Request; waitMs: number; shown: boolean } | { stop: Partial<RoomView> };

/**
 * What to do after a failed join or poll (docs/api.md "The waiting room"): a poll without a ticket
 * (`404`, the room lost it) joins again; `429` waits its `retry-after` and asks again, unshown, since
 * nothing happened; no answer or a `5xx` backs off (`retry-after`, else doubling) and says so; any
 * other refusal stops.
 */
function afterFailure(error: unknown, request: Request, failures: number, pollAfterMs: number): AfterFailure {
  const retryAfterMs = error instanceof ApiError && error.retryAfterSeconds ? error.retryAfterSeconds * 1_000 : null;
  if (!(error instanceof ApiError) || error.status === 0 || error.status >= 500) {
    return { retry: request, waitMs: retryAfterMs ?? Math.min(1_000 * 2 ** failures, LONGEST_BACKOFF_MS), shown: true };
  }
  if (error.code === ErrorCode.RateLimited)
    return { retry: request, waitMs: retryAfterMs ?? pollAfterMs, shown: false };
  if (error.code === ErrorCode.NotFound && request === 'poll') return { retry: 'join', waitMs: 0, shown: false };
  if (error.code === ErrorCode.NoWaitingRoom) return { stop: { phase: 'gone' } };
  if (error.code === ErrorCode.Unauthenticated) sessionStore.setGuest(null); // the sign-in expired
  return { stop: { failed: error } };
}

/**
 * Joins the room, then polls the ticket until the loop is aborted or the sale ends. A sold-out ticket is
 * not polled while the sale's own figures (`unitsLeft`, read every few seconds by the page anyway) show
 * no unit: the room only admits again once units come back.
 */
async function followTicket(
  saleId: string,
  jwt: string,
  signal: AbortSignal,
  unitsLeft: () => boolean,
  report: (update: (room: RoomView) => RoomView) => void,
): Promise<void> {
  let request: Request = 'join';
  let failures = 0;
  let pollAfterMs = 1_000;
  while (!signal.aborted) {
    let ticket: Ticket;
    try {
      ticket =
        request === 'join' ? await api.joinWaitingRoom(saleId, jwt, signal) : await api.ticket(saleId, jwt, signal);
    } catch (error) {
      if (signal.aborted) return;
      const next = afterFailure(error, request, failures++, pollAfterMs);
      if ('stop' in next) return report((room) => ({ ...room, ...next.stop, problem: undefined }));
      if (next.shown)
        report((room) => ({ ...room, problem: { error, retryInSeconds: Math.ceil(next.waitMs / 1_000) } }));
      request = next.retry;
      await sleep(next.waitMs, signal);
      continue;
    }
    if (signal.aborted) return;
    failures = 0;
    pollAfterMs = ticket.pollAfterMs;
    report((room) => withTicket(room, ticket));
    if (ticket.state === 'ended') return;
    await sleep(nextPollIn(ticket), signal);
    if (ticket.state === 'sold_out') {
      while (!unitsLeft() && !signal.aborted) await sleep(UNITS_CHECK_MS, signal);
    }
    request = 'poll';
  }
}

/**
 * The buyer's place in a sale's waiting room (docs/api.md "The waiting room"): joins while `enabled`,
 * then polls as each ticket says (`pollAfterMs`; `retry-after` on a 429 or a 503; joining again after a
 * 404), until the sale ends or the page no longer wants the room (the buyer is at their limit, say).
 * Once admitted, the ticket is asked about again only when its pass runs out: that poll puts the buyer
 * back in the line. `unitsLeft`: whether the sale, as the page last read it, has a unit left.
 */
export function useWaitingRoom(
  saleId: string,
  guest: Session | null,
  { enabled, unitsLeft }: { enabled: boolean; unitsLeft: boolean },
): WaitingRoom {
  const jwt = guest?.token;
  const [restarts, setRestarts] = useState({ count: 0, turnEnded: false });
  // One run of the loop per key: a view reported by an earlier run (another sale, sign-in or join) is
  // not shown, so nothing has to reset the state when the key changes.
  const runKey = enabled && jwt ? `${saleId}\n${jwt}\n${restarts.count}` : null;
  const [reported, setReported] = useState<{ key: string; room: RoomView } | null>(null);
  const unitsLeftRef = useRef(unitsLeft);
  useEffect(() => {
    unitsLeftRef.current = unitsLeft;
  });

  const { turnEnded } = restarts;
  useEffect(() => {
    if (!runKey || !jwt) return;
    const controller = new AbortController();
    let room: RoomView = { phase: 'joining', turnEnded };
    void followTicket(
      saleId,
      jwt,
      controller.signal,
      () => unitsLeftRef.current,
      (update) => {
        room = update(room);
        setReported({ key: runKey, room });
      },
    );
    return () => controller.abort();
  }, [runKey, saleId, jwt, turnEnded]);

  const rejoin = useCallback(
    (turnEnded: boolean) => setRestarts((previous) => ({ count: previous.count + 1, turnEnded })),
    [],
  );
  const room = reported && reported.key === runKey ? reported.room : { phase: 'joining' as const, turnEnded };
  return { ...room, rejoin };
}
