import { Cluster, type Redis } from 'ioredis';
import type { RedisClient } from './redis-client';

/** How often every connection of a client is asked for a PING. */
const PROBE_EVERY_MS = 2_000;
/** A connection whose PING is not answered within this long is taken for a link gone silent. */
export const SILENT_AFTER_MS = 5_000;

/**
 * Tears down a client's connections whose link went silent, so that they reconnect. A network partition
 * drops packets without a word: the connection stays open, commands sent on it go unanswered, and once
 * the link heals TCP resends them only on its retransmission backoff — tens of seconds after a long cut,
 * during which that process's work on that Redis (a sale's writing, a sweep) waits. A PING per
 * connection every PROBE_EVERY_MS that is not answered within SILENT_AFTER_MS closes the connection;
 * the client reconnects as it does after any loss, at once when the link is back (its pending commands
 * are failed or resent as the client is configured for a lost connection). Not for a connection that
 * runs blocking commands, where a PING waits its turn behind them. Stops when the client ends, or when
 * the returned function is called.
 */
export function watchForSilentLinks(
  client: RedisClient,
  timings: { probeEveryMs?: number; silentAfterMs?: number } = {},
): () => void {
  const silentAfterMs = timings.silentAfterMs ?? SILENT_AFTER_MS;
  const probing = new Set<Redis>();
  const probe = (connection: Redis): void => {
    if (connection.status !== 'ready' || probing.has(connection)) return;
    probing.add(connection);
    let answered = false;
    const ping = connection.ping().then(
      () => (answered = true),
      () => (answered = true), // an error reply or a lost connection: the link is not silent, or already closed
    );
    const timer = setTimeout(() => {
      // One turn of the event loop first: a process that was busy past the deadline may have the answer
      // waiting in its socket, read only after timers run.
      setImmediate(() => {
        probing.delete(connection);
        if (!answered && connection.status === 'ready') connection.disconnect(true);
      });
    }, silentAfterMs);
    void ping.then(() => {
      clearTimeout(timer);
      probing.delete(connection);
    });
  };
  const interval = setInterval(() => {
    const connections = client instanceof Cluster ? client.nodes('all') : [client];
    for (const connection of connections) probe(connection);
  }, timings.probeEveryMs ?? PROBE_EVERY_MS);
  interval.unref();
  const stop = () => clearInterval(interval);
  client.once('end', stop);
  return stop;
}
