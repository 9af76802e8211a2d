import cluster from 'node:cluster';

/**
 * In an API process forked by the cluster's primary (cluster.ts): when the primary dies (a SIGKILL, an
 * OOM kill), this process has lost its share of the port and its stdout, which the primary relayed.
 * Node's cluster then exits the process — but an exit flushes the buffered log lines (ops/logging.ts)
 * synchronously into that broken pipe, and the writer retries a broken pipe forever: the process would
 * stay, orphaned, holding its Redis and MySQL connections. So it ends at once instead, as a crash would;
 * what it was doing is safe as after any crash (a reservation is atomic, its token replays).
 */
export function endWithThePrimary(): void {
  if (!cluster.isWorker) return;
  // Before cluster's own listener, which would call process.exit().
  process.prependOnceListener('disconnect', () => process.kill(process.pid, 'SIGKILL'));
}
