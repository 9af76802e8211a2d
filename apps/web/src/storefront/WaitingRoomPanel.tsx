import type { Ticket } from '@flash-sale/contract';
import { useEffect, useId, useRef, useState } from 'react';
import { errorMessage } from '../api/error-messages';
import { Countdown } from '../components/Countdown';
import { ErrorNotice } from '../components/ErrorNotice';
import { formatSpan, formatWait } from '../components/format';
import type { WaitingRoom } from './use-waiting-room';

/** A screen reader hears the buyer's position at most this often: near the front it changes every second. */
const POSITION_ANNOUNCEMENT_MS = 10_000;

const count = (n: number) => n.toLocaleString('en-US');

/**
 * The buyer's place in the sale's waiting room: before the opening, a countdown to the draw; then their
 * position, the estimated wait and how far they have come; once admitted, how long their turn lasts.
 * The headline is a live region, so each change of phase is announced; positions are announced calmly.
 */
export function WaitingRoomPanel({ room, passSeconds }: { room: WaitingRoom; passSeconds: number }) {
  const headingId = useId();
  const { phase, ticket } = room;
  if (phase === 'ended' || phase === 'gone') return null;
  const beforeOpening = phase === 'waiting' && ticket?.position === undefined;

  return (
    <section className="waiting-room" aria-labelledby={headingId}>
      <div role="status">
        <h2 id={headingId} className="waiting-room__headline">
          {headline(phase, beforeOpening)}
        </h2>
      </div>
      {room.turnEnded && phase !== 'admitted' && (
        <p className="notice notice--warning">Your time to buy ran out, so you are back in the line.</p>
      )}
      {phase === 'waiting' && ticket && (beforeOpening ? <BeforeOpening ticket={ticket} /> : <InLine room={room} />)}
      {phase === 'admitted' && ticket?.passExpiresAt && (
        <p className="waiting-room__turn">
          <Countdown to={ticket.passExpiresAt} label="Your turn ends in" done="Your turn is ending…" />
          <span> Buy now, before your turn ends.</span>
        </p>
      )}
      {phase === 'sold_out' && (
        <p>
          Every unit is claimed for now. Units from unpaid or cancelled orders come back: keep this page open and you
          keep your place.
        </p>
      )}
      {room.problem && (
        <p className="field__hint" role="status">
          {errorMessage(room.problem.error)} Trying again in {room.problem.retryInSeconds} s…
        </p>
      )}
      {room.failed !== undefined && (
        <>
          <ErrorNotice error={room.failed} title="You are not in the line" />
          <button type="button" className="button button--secondary" onClick={() => room.rejoin(false)}>
            Try again
          </button>
        </>
      )}
      {phase !== 'admitted' && (
        <p className="field__hint">
          When it is your turn you will have {formatSpan(passSeconds)} to buy. This page updates by itself: keep it
          open.
        </p>
      )}
    </section>
  );
}

function headline(phase: WaitingRoom['phase'], beforeOpening: boolean): string {
  switch (phase) {
    case 'joining':
      return 'Joining the line…';
    case 'waiting':
      return beforeOpening ? 'You are in the waiting room' : 'You are in the line';
    case 'admitted':
      return 'It is your turn to buy';
    default:
      return 'The line is paused: sold out';
  }
}

function BeforeOpening({ ticket }: { ticket: Ticket }) {
  return (
    <>
      <p>
        The order is drawn at random when the sale opens, so arriving earlier gives no advantage — and arriving later
        none either, until it opens.
      </p>
      {ticket.opensAt && (
        <p className="waiting-room__opens">
          <Countdown to={ticket.opensAt} label="The sale opens in" done="Drawing the order…" />
        </p>
      )}
      <dl className="waiting-room__facts">
        {ticket.waiting !== undefined && (
          <>
            <dt>In the room</dt>
            <dd>{count(ticket.waiting)}</dd>
          </>
        )}
        {ticket.estimatedWaitSeconds !== undefined && (
          <>
            <dt>Estimated wait</dt>
            <dd>{formatWait(ticket.estimatedWaitSeconds)}, the opening included</dd>
          </>
        )}
      </dl>
    </>
  );
}

function InLine({ room }: { room: WaitingRoom }) {
  const position = room.ticket?.position ?? 0;
  const first = Math.max(room.firstPosition ?? position, position);
  // From the first position seen (0 %) to the front, where the buyer is admitted (100 %).
  const moved = first - position;
  const percent = first > 0 ? Math.round((100 * moved) / first) : 0;
  const estimate = room.ticket?.estimatedWaitSeconds;
  const announced = useCalmValue(`You are number ${count(position)} in the line.`, POSITION_ANNOUNCEMENT_MS);
  return (
    <>
      <dl className="waiting-room__facts">
        <dt>Your place</dt>
        <dd className="waiting-room__place">{count(position)}</dd>
        {estimate !== undefined && (
          <>
            <dt>Estimated wait</dt>
            <dd>{formatWait(estimate)}</dd>
          </>
        )}
      </dl>
      <p className="visually-hidden" aria-live="polite">
        {announced}
      </p>
      <div
        className="progress"
        role="progressbar"
        aria-label="Your way to the front of the line"
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={percent}
        aria-valuetext={`${count(moved)} of ${count(first)} places moved`}
      >
        <div className="progress__bar" style={{ width: `${percent}%` }} />
      </div>
      <p className="field__hint">
        {moved > 0
          ? `${count(moved)} ${moved === 1 ? 'place' : 'places'} moved since you joined.`
          : 'Your place moves as buyers ahead of you get their turn.'}
      </p>
    </>
  );
}

/** `value`, changed at most once per `intervalMs`: what a live region reads out, without a flood. */
function useCalmValue<T>(value: T, intervalMs: number): T {
  const [shown, setShown] = useState(value);
  const shownAt = useRef(0);
  useEffect(() => {
    if (Object.is(value, shown)) return;
    const timer = setTimeout(
      () => {
        shownAt.current = Date.now();
        setShown(value);
      },
      Math.max(0, shownAt.current + intervalMs - Date.now()),
    );
    return () => clearTimeout(timer);
  }, [value, shown, intervalMs]);
  return shown;
}
