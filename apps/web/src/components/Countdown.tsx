import { formatDuration } from './format';
import { useServerNow } from './use-now';

interface CountdownProps {
  /** ISO instant the countdown runs to. */
  to: string;
  /** Read before the time, e.g. "Starts in". */
  label: string;
  /** Shown once the instant has passed. */
  done?: string;
}

/**
 * A ticking "Starts in 1:02:05". The visible digits change every second, so screen readers get the
 * time through a polite live region only when the minute changes, not every tick.
 */
export function Countdown({ to, label, done }: CountdownProps) {
  const now = useServerNow();
  const secondsLeft = Math.ceil((Date.parse(to) - now) / 1_000);
  if (secondsLeft <= 0) return done ? <span className="countdown countdown--done">{done}</span> : null;
  const minutesLeft = Math.ceil(secondsLeft / 60);
  return (
    <span className="countdown">
      <span aria-hidden="true">
        {label} <time dateTime={to}>{formatDuration(secondsLeft)}</time>
      </span>
      <span className="visually-hidden" aria-live="polite">
        {label} about {minutesLeft} minute{minutesLeft === 1 ? '' : 's'}
      </span>
    </span>
  );
}
