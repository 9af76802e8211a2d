import { Cluster, Redis, type RedisOptions } from 'ioredis';

export type RedisClient = Redis | Cluster;

/** How often a cluster client reads the slot map on its own. */
const SLOT_MAP_READ_INTERVAL_MS = 5_000;

/**
 * A process that serves requests (the API) fails a Redis command after this many reconnect attempts,
 * so a request gets its 503 rather than waiting for Redis to come back.
 */
export const REQUEST_COMMAND_RETRIES = 2;

/**
 * A command whose connection was lost before Redis answered: it may or may not have run. The caller
 * must treat its outcome as unknown (a replay settles it).
 */
export class RedisReplyLostError extends Error {
  override readonly name = 'RedisReplyLostError';

  constructor() {
    super('Connection lost before Redis answered: the command may have run');
  }
}

export interface RedisConnectionConfig {
  url: string;
  /** `host:port` of cluster nodes; when non-empty the client runs in cluster mode. */
  clusterNodes: string[];
}

/** One place decides between a single node and a cluster; everything else takes a `RedisClient`. */
export function createRedisClient(config: RedisConnectionConfig, options: RedisOptions = {}): RedisClient {
  if (config.clusterNodes.length > 0) {
    const nodes = config.clusterNodes.map((node) => {
      const [host, port] = node.split(':');
      return { host: host ?? '127.0.0.1', port: Number(port ?? 6379) };
    });
    // The slot map is read again on a timer too, not only when a command is redirected: a failover
    // this client did not see die (a partition, a manual failover) is then noticed even by a process
    // that sends nothing to the moved slots (RedisConnection.onConnectionLost).
    return new Cluster(nodes, {
      redisOptions: options,
      scaleReads: 'master',
      slotsRefreshInterval: SLOT_MAP_READ_INTERVAL_MS,
    });
  }
  return new Redis(config.url, options);
}

/**
 * Closes a client for good: QUIT while connected, so that the replies still due arrive first; otherwise a
 * plain disconnect. A QUIT sent while Redis is away would wait in the offline queue while the client
 * keeps reconnecting for ever, and its timers would hold the process open after its shutdown.
 */
export async function closeRedisClient(client: RedisClient): Promise<void> {
  if (client.status === 'ready') await client.quit().catch(() => undefined);
  if (client.status !== 'end') client.disconnect();
}

/**
 * ioredis keeps the commands a lost connection never answered and, without `autoResendUnfulfilledCommands`,
 * drops them on the next connection without settling their promises. Rejecting them when the
 * connection closes gives their callers an answer: the command may or may not have run.
 */
export function failUnansweredOnDisconnect(client: RedisClient): void {
  if (!(client instanceof Redis)) return;
  const withQueue = client as unknown as { flushQueue(error: Error, options: { offlineQueue: boolean }): void };
  client.on('close', () => {
    withQueue.flushQueue(new RedisReplyLostError(), { offlineQueue: false });
  });
}
