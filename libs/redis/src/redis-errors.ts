import { CONNECTION_CLOSED_ERROR_MSG } from 'ioredis/built/utils';
import { RedisReplyLostError } from './redis-client';

/**
 * Error replies of a Redis Cluster in the middle of a failover or a resharding: the slot's master is
 * gone, or the slot is moving (`MOVED`/`ASK` past ioredis's own redirections). Also a node still
 * loading its data, a write that reached a replica (a master demoted by a failover), a replica cut off
 * from its master (`MASTERDOWN`), and a master refusing writes while too few replicas follow it
 * (`NOREPLICAS`, `min-replicas-to-write`).
 */
const UNAVAILABLE_REPLY_CODES = new Set([
  'CLUSTERDOWN',
  'TRYAGAIN',
  'MOVED',
  'ASK',
  'LOADING',
  'READONLY',
  'MASTERDOWN',
  'NOREPLICAS',
]);

/** ioredis's errors for a command that never reached Redis (or whose answer never came back). */
const UNAVAILABLE_ERROR_NAMES = new Set([
  // The command waited through `maxRetriesPerRequest` reconnect attempts.
  'MaxRetriesPerRequestError',
  // No cluster node answered the refresh of the slot table.
  'ClusterAllFailedError',
]);

/** The socket's own failures, which ioredis reports under Node's code. */
const SOCKET_FAILURE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE']);

/**
 * ioredis raises these as plain errors, without a class or a code: a command on a connection that is
 * closed (its message is ioredis's exported constant), one refused without an offline queue (by a
 * connection, or by a cluster client not ready), a cluster command redirected more often than
 * `maxRedirections`, and the commands a cluster client held while it reconnected, rejected when none
 * of its nodes answered (a failover's first moments, all masters briefly unreachable), and a command
 * unanswered past the client's `commandTimeout`.
 */
const OFFLINE_QUEUE_REFUSED = "Stream isn't writeable";
const CLUSTER_NOT_READY = "Cluster isn't ready";
const TOO_MANY_REDIRECTIONS = 'Too many Cluster redirections';
const NO_STARTUP_NODE = 'None of startup nodes is available';
/** A command unanswered past the client's `commandTimeout` (a silent partition): it may have run. */
const COMMAND_TIMED_OUT = 'Command timed out';

/** The code of a Redis error reply (`CLUSTERDOWN`, `MOVED`, ...): its first word. Undefined for any other error. */
export function redisReplyCode(error: unknown): string | undefined {
  if (!(error instanceof Error) || error.name !== 'ReplyError') return undefined;
  return error.message.split(' ', 1)[0];
}

/** Redis could not be reached, or could not serve the key right now: the caller may retry. */
export function isRedisUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const { code } = error as { code?: unknown };
  return (
    error instanceof RedisReplyLostError ||
    UNAVAILABLE_ERROR_NAMES.has(error.name) ||
    UNAVAILABLE_REPLY_CODES.has(redisReplyCode(error) ?? '') ||
    (typeof code === 'string' && SOCKET_FAILURE_CODES.has(code)) ||
    error.message === CONNECTION_CLOSED_ERROR_MSG ||
    error.message.startsWith(OFFLINE_QUEUE_REFUSED) ||
    error.message.startsWith(CLUSTER_NOT_READY) ||
    error.message.startsWith(TOO_MANY_REDIRECTIONS) ||
    error.message.startsWith(NO_STARTUP_NODE) ||
    error.message === COMMAND_TIMED_OUT
  );
}
