/**
 * Waits for the apps to close, `ms` at most. After their Redis was killed and restarted, BullMQ's
 * blocking connection can take a while to notice; the assertions are done by then, so a slow shutdown
 * must not hold the suite.
 */
export async function closeWithin(ms: number, ...closing: (Promise<unknown> | undefined)[]): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([Promise.all(closing), new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  } finally {
    clearTimeout(timer);
  }
}
