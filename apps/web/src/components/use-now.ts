import { useEffect, useState } from 'react';
import { serverClock } from '../api/server-clock';

/** The server's current time in ms, re-rendering every `intervalMs` (countdowns tick with it). */
export function useServerNow(intervalMs = 1_000): number {
  const [now, setNow] = useState(() => serverClock.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(serverClock.now()), intervalMs);
    return () => clearInterval(timer);
  }, [intervalMs]);
  return now;
}
