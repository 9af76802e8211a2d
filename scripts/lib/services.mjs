/**
 * Finds (or starts) the Redis and MySQL the app needs, using only Node built-ins: it runs before
 * `npm install` on a fresh machine.
 *
 * Order of preference, per service:
 *   1. the URL in the environment (REDIS_URL / DATABASE_URL), used as given;
 *   2. the default local service (redis://127.0.0.1:6379, mysql://root@127.0.0.1:3306/flash_sale);
 *   3. a private instance started from locally installed binaries, with its data under `dataDir`.
 * FLASH_SALE_PRIVATE_SERVICES=1 skips 1 and 2, which is how tests get throwaway servers.
 *
 *   const services = await ensureServices({ dataDir: '.data', log: console.log });
 *   // services.redisUrl, services.databaseUrl ... later: await services.stop();
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { startMysqlServer, findMysqlServer } from './mysql-server.mjs';
import { freePort } from './ports.mjs';
import { mysqlAnswers, redisAnswers, redisPersistence } from './probes.mjs';
import { findExecutable, shortPath, waitUntil } from './processes.mjs';
import { startRedisServer } from './redis-server.mjs';

export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';
export const DEFAULT_DATABASE_URL = 'mysql://root@127.0.0.1:3306/flash_sale';
const DATABASE_NAME = 'flash_sale';

/** Thrown when a service can be neither found nor started; the message says what to install. */
export class ServicesUnavailableError extends Error {
  name = 'ServicesUnavailableError';
}

/**
 * @param {object} options
 * @param {string} options.dataDir where private instances keep their data and logs
 * @param {(message: string) => void} [options.log]
 * @param {Record<string, string | undefined>} [options.env]
 * @param {boolean} [options.forcePrivate] defaults to env FLASH_SALE_PRIVATE_SERVICES=1
 * @param {(name: string, code: number | null, signal: string | null) => void} [options.onUnexpectedExit]
 *   called if a private instance dies while in use (so the caller can stop what depends on it)
 * @returns {Promise<{ redisUrl: string | undefined, databaseUrl: string, stop: () => Promise<void> }>}
 *   redisUrl is undefined when REDIS_CLUSTER_NODES is set: the app then talks to the cluster itself.
 */
export async function ensureServices({
  dataDir,
  log = () => {},
  env = process.env,
  forcePrivate = env.FLASH_SALE_PRIVATE_SERVICES === '1',
  onUnexpectedExit = () => {},
}) {
  dataDir = path.resolve(dataDir);
  const redisPlan = await planRedis(env, forcePrivate, log);
  const mysqlPlan = await planMysql(env, forcePrivate, log);

  // Decide everything before starting anything, so a missing binary never leaves a half-started set.
  const missing = [redisPlan, mysqlPlan].filter((plan) => plan.kind === 'missing');
  if (missing.length) throw new ServicesUnavailableError(installHint(missing.map((plan) => plan.what)));

  const started = [];
  const stop = async () => {
    // Reverse order of start; each stop waits for a clean shutdown (both flush their data on SIGTERM).
    for (const instance of started.reverse()) await instance.stop();
    started.length = 0;
  };
  try {
    let redisUrl = redisPlan.url;
    if (redisPlan.kind === 'private') {
      const redis = await startPrivateRedis(redisPlan.binary, dataDir, log, onUnexpectedExit);
      started.push(redis);
      redisUrl = redis.url;
    }
    let databaseUrl = mysqlPlan.url;
    if (mysqlPlan.kind === 'private') {
      const mysql = await startMysqlServer(mysqlPlan.binaries, DATABASE_NAME, dataDir, log, onUnexpectedExit);
      started.push(mysql);
      databaseUrl = mysql.url;
    }
    return { redisUrl, databaseUrl, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

// ---------------------------------------------------------------------------------------------
// Planning: which service to use

async function planRedis(env, forcePrivate, log) {
  if (!forcePrivate && env.REDIS_CLUSTER_NODES) {
    log(`Redis: cluster mode (REDIS_CLUSTER_NODES=${env.REDIS_CLUSTER_NODES}), not checked here`);
    return { kind: 'existing', url: undefined };
  }
  const existing = await findExisting('Redis', 'REDIS_URL', DEFAULT_REDIS_URL, redisAnswers, env, forcePrivate, log);
  if (existing) {
    if ((await redisPersistence(existing.url)) === 'none') {
      log(
        'Redis: this Redis keeps no append-only file: if it crashes, purchases not yet written to MySQL are lost ' +
          '(enable appendonly, or set FLASH_SALE_PRIVATE_SERVICES=1 for a persistent private one)',
      );
    }
    return existing;
  }
  const binary = findExecutable(['redis-server']);
  return binary ? { kind: 'private', binary } : { kind: 'missing', what: 'redis' };
}

async function planMysql(env, forcePrivate, log) {
  const existing = await findExisting(
    'MySQL',
    'DATABASE_URL',
    DEFAULT_DATABASE_URL,
    mysqlAnswers,
    env,
    forcePrivate,
    log,
  );
  if (existing) return existing;
  const binaries = findMysqlServer();
  return binaries ? { kind: 'private', binaries } : { kind: 'missing', what: 'mysql' };
}

/**
 * An explicitly configured URL is used as given (waiting a little, it may be a container still
 * booting) and is an error if it never answers: silently replacing it would surprise. The default
 * URL is only probed once.
 */
async function findExisting(label, variable, defaultUrl, answers, env, forcePrivate, log) {
  if (forcePrivate) {
    if (env[variable]) log(`${label}: ignoring ${variable} because FLASH_SALE_PRIVATE_SERVICES=1`);
    return null;
  }
  const configured = env[variable];
  if (configured) {
    if (await waitUntil(() => answers(configured), 10_000)) {
      log(`${label}: using ${variable}=${redact(configured)}`);
      return { kind: 'existing', url: configured };
    }
    throw new ServicesUnavailableError(
      `${variable}=${redact(configured)} does not answer. Start it, or unset ${variable}.`,
    );
  }
  if (await answers(defaultUrl)) {
    log(`${label}: using the local service at ${defaultUrl}`);
    return { kind: 'existing', url: defaultUrl };
  }
  log(`${label}: nothing answers at ${defaultUrl}`);
  return null;
}

function installHint(what) {
  const names = what.map((name) => (name === 'redis' ? 'Redis' : 'MySQL/MariaDB')).join(' and ');
  return [
    `${names} not found: no server answers and no server binary is installed.`,
    'Install them (the app starts private instances under .data/ by itself):',
    '  Debian/Ubuntu:  sudo apt-get install redis-server mariadb-server',
    '  macOS:          brew install redis mariadb',
    'or run the whole stack in containers:  docker compose up',
    'or point REDIS_URL / DATABASE_URL at servers you already have.',
  ].join('\n');
}

/** Persistent, like a developer's own Redis: the app's data survives a restart of `npm start`. */
async function startPrivateRedis(binary, dataDir, log, onUnexpectedExit) {
  const dir = path.join(dataDir, 'redis');
  mkdirSync(dir, { recursive: true });
  const port = await freePort();
  log(`Redis: starting a private redis-server on port ${port} (data in ${shortPath(dir)})`);
  const logFile = path.join(dataDir, 'redis.log');
  return startRedisServer({ binary, port, dir, logFile, appendOnly: true, onUnexpectedExit });
}

function redact(url) {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.toString();
}
