/** One run at a time per key in this process: a call made while one runs shares it. */
export function singleFlight<T>(inFlight: Map<string, Promise<T>>, key: string, run: () => Promise<T>): Promise<T> {
  const running = inFlight.get(key);
  if (running) return running;
  const started = run().finally(() => inFlight.delete(key));
  inFlight.set(key, started);
  return started;
}

export interface Coalesced<T> {
  running: Promise<T>;
  next?: Promise<T>;
}

/**
 * Runs `run` at most once at a time per key; calls made during a run share one follow-up run, so every
 * caller gets the answer of a run that started after it asked.
 */
export function coalesce<T>(state: Map<string, Coalesced<T>>, key: string, run: () => Promise<T>): Promise<T> {
  const entry = state.get(key);
  if (entry?.next) return entry.next;
  const ignore = (): void => undefined;
  const mine: Promise<T> = (entry ? entry.running.then(ignore, ignore) : Promise.resolve())
    .then(() => {
      const now = state.get(key);
      if (now?.next === mine) state.set(key, { running: mine });
      return run();
    })
    .finally(() => {
      const now = state.get(key);
      if (now?.running === mine && !now.next) state.delete(key);
    });
  if (entry) entry.next = mine;
  else state.set(key, { running: mine });
  return mine;
}
