import { Cluster, Redis, type RedisOptions } from 'ioredis';

export type RedisClient = Redis | Cluster;

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
    return new Cluster(nodes, { redisOptions: options, scaleReads: 'master' });
  }
  return new Redis(config.url, options);
}

/**
 * Connection errors reach every client and every BullMQ queue built on them; unheard, ioredis and
 * BullMQ print each reconnect attempt to stderr. One line per outage is enough: the requests and jobs
 * that need Redis report their own failures. `clients` reset the report when they are ready again.
 */
export function reportOutagesOnce(
  clients: readonly RedisClient[],
  alsoFailing: readonly NodeJS.EventEmitter[],
  report: (message: string) => void,
): void {
  let reported = false;
  const emitters: NodeJS.EventEmitter[] = [...clients, ...alsoFailing];
  for (const client of clients as readonly NodeJS.EventEmitter[]) client.on('ready', () => (reported = false));
  for (const emitter of emitters) {
    emitter.on('error', (error: Error) => {
      if (reported) return;
      reported = true;
      report(`Redis connection lost: ${error.message}`);
    });
  }
}
