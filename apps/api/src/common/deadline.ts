/**
 * Rejects when `promise` has not settled within `ms` (with `timedOut()`'s error, so a caller can tell a
 * time-out from the work's own failure). Probes and scrapes use it: an ioredis or mysql2 call made while
 * the server is down can wait for a reconnect far longer than a probe may.
 */
export async function withDeadline<T>(
  promise: Promise<T>,
  ms: number,
  what: string,
  timedOut: () => Error = () => new Error(`${what} did not answer within ${ms} ms`),
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(timedOut()), ms);
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
