/**
 * The stack one run measures — a private database, Redis (private unless REDIS_URL names one), the
 * built API and worker as children — and its teardown, which runs whatever happened (success, failure,
 * Ctrl-C) and leaves nothing behind: no child, no database, no key.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../../scripts/lib/ports.mjs';
import { httpAnswers } from '../../scripts/lib/probes.mjs';
import { findExecutable, spawnLogged, tail, terminate, waitUntil } from '../../scripts/lib/processes.mjs';
import { startRedisServer } from '../../scripts/lib/redis-server.mjs';
import { APP_DIST, ROOT, require } from './app-dist.mjs';
import { withProbes } from './process-probes.mjs';
import { profiledChildOptions } from './profiler.mjs';
import {
  ADMIN_PASSWORD,
  DATABASE_URL,
  DB_NAME,
  JWT_SECRET,
  PAYMENT_WEBHOOK_SECRET,
  MYSQL_SERVER_URL,
  QUEUE_PREFIX,
  REDIS_KEY_PREFIX,
  RUN_ID,
  TMP,
  TOKEN_TTL_S,
  log,
} from './settings.mjs';

/** Everything cleanup() must undo, and the processes the measurements look at. */
export const state = {
  children: new Set(),
  redis: null,
  mysql: null,
  databaseCreated: false,
  api: undefined,
  /** The running worker (the drain replaces it); its pid while it runs, for CPU accounting. */
  worker: undefined,
  workerPid: undefined,
  /** The private redis-server, when the bench started one: `{ url, pid, stop }`. */
  privateRedis: undefined,
  /** The scale section's Redis Cluster while it runs: `{ nodes, stop }`. */
  redisCluster: undefined,
  /** Databases beside the main one (the scale section's cluster stack), dropped at cleanup. */
  extraDatabases: [],
  /** The ceiling server while its scenario runs. */
  ceiling: undefined,
  loadRun: undefined,
  interrupted: false,
  keepLogs: false,
  cleaning: null,
};

const LOG_LINES_SHOWN = 20;

/** Builds (`tsc -b`) only if a built file the bench needs is missing. */
export function ensureBuilt() {
  if (Object.values(APP_DIST).every((entry) => existsSync(path.join(ROOT, entry)))) return;
  log('a dist entry point is missing: npx tsc -b tsconfig.json');
  runOrThrow(process.platform === 'win32' ? 'npx.cmd' : 'npx', ['tsc', '-b', 'tsconfig.json'], process.env);
}

function runOrThrow(command, args, env) {
  const result = spawnSync(command, args, { cwd: ROOT, env, stdio: 'inherit' });
  if (result.status !== 0)
    throw new Error(`${command} ${args.join(' ')} exited with ${result.status ?? result.signal}`);
}

/**
 * Redis (REDIS_URL, or a private redis-server), MySQL, the private database, then the API and the
 * worker on it. Returns what the scenarios need to reach them.
 */
export async function startStack() {
  const redisUrl = process.env.REDIS_URL || (await startPrivateRedis());
  await connectServers(redisUrl);
  log(`run ${RUN_ID}: database ${DB_NAME}, Redis prefixes ${REDIS_KEY_PREFIX} / ${QUEUE_PREFIX}`);
  await createDatabase();
  const port = await freePort();
  const ceilingPort = await freePort();
  const appEnv = await appEnvironment(redisUrl, port);
  const baseUrl = `http://127.0.0.1:${port}`;
  state.api = startApi(appEnv);
  startWorker(appEnv);
  await waitForHttp(`${baseUrl}/api/sales`, state.api);
  await waitForLog(state.worker, 'Worker consuming');
  log(`API on ${baseUrl} (pid ${state.api.pid}), worker pid ${state.worker.pid}`);
  return { redisUrl, appEnv, baseUrl, ceilingUrl: `http://127.0.0.1:${ceilingPort}`, ceilingPort };
}

function startApi(appEnv) {
  return startChild('api', APP_DIST.api, appEnv, withProbes(profiledChildOptions('api')));
}

/** The main stack's API again, as a fresh process on the same port (a process found running slow). */
export async function restartApi(appEnv, baseUrl) {
  await stopChild(state.api);
  state.api = startApi(appEnv);
  await waitForHttp(`${baseUrl}/api/sales`, state.api);
  return state.api;
}

/**
 * A redis-server of the bench's own (no persistence, like the shared one): Redis's command time and CPU
 * are read server-wide, so on a machine where tests or other benches use the shared Redis only a
 * private one measures this run alone. Stopped at cleanup, after the apps that use it.
 */
async function startPrivateRedis() {
  const binary = findExecutable(['redis-server']);
  if (!binary) throw new Error('redis-server is not installed: install it, or set REDIS_URL');
  const port = await freePort();
  const logFile = path.join(TMP, 'redis.log');
  state.privateRedis = await startRedisServer({
    binary,
    port,
    dir: TMP,
    logFile,
    appendOnly: false,
    onUnexpectedExit: (_name, code, signal) => childDied('redis', code ?? signal, logFile),
  });
  log(`private redis-server on port ${port} (pid ${state.privateRedis.pid})`);
  return state.privateRedis.url;
}

async function connectServers(redisUrl) {
  const { Redis } = require('ioredis');
  const mysql = require('mysql2/promise');
  state.redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const server = new URL(MYSQL_SERVER_URL);
  state.mysql = await mysql.createConnection({
    host: server.hostname,
    port: Number(server.port || 3306),
    user: decodeURIComponent(server.username || 'root'),
    password: decodeURIComponent(server.password || ''),
  });
}

async function createDatabase() {
  state.databaseCreated = true; // set before migrating: a half-created database is dropped too
  runOrThrow(process.execPath, [APP_DIST.migrate], { ...process.env, DATABASE_URL });
  await state.mysql.query(`USE \`${DB_NAME}\``);
}

/**
 * Another migrated database on the same server (`<main name>_<suffix>`), for a second stack that must
 * not share the main one's sales; dropped at cleanup. Returns its name and URL.
 */
export function createExtraDatabase(suffix) {
  const name = `${DB_NAME}_${suffix}`;
  const url = `${MYSQL_SERVER_URL}/${name}`;
  state.extraDatabases.push(name); // before migrating: a half-created database is dropped too
  runOrThrow(process.execPath, [APP_DIST.migrate], { ...process.env, DATABASE_URL: url });
  return { name, url };
}

/** The API's and the worker's environment: as deployed, on this run's database, Redis and prefixes. */
export async function appEnvironment(redisUrl, port) {
  return {
    ...process.env,
    NODE_ENV: 'production', // as deployed; every secret is set, so production mode boots
    PORT: String(port),
    HOST: '127.0.0.1',
    DATABASE_URL,
    REDIS_URL: redisUrl,
    REDIS_KEY_PREFIX,
    QUEUE_PREFIX,
    JWT_SECRET,
    ADMIN_PASSWORD,
    PAYMENT_WEBHOOK_SECRET,
    SUBMIT_TOKEN_TTL_SECONDS: String(TOKEN_TTL_S),
    // Its own metrics port: another worker on this machine may hold the default (9464).
    WORKER_METRICS_PORT: String(await freePort()),
    // Rate limits (docs/protection.md): every request is a distinct buyer, so the per-user limits never
    // bind; the per-sale limit is raised far above any rate this machine reaches. Both are still
    // consumed on every purchase — the bench measures the limiter's round trip, it only never refuses.
    RATE_LIMIT_PROFILE: 'load-test',
    RATE_LIMIT_SALE_PURCHASES_POINTS: '10000000',
  };
}

/** A worker; `profiled` (the drain's) is ready to be CPU-profiled when BENCH_CPU_PROF=1. */
export function startWorker(appEnv, { profiled = false } = {}) {
  state.worker = startChild('worker', APP_DIST.worker, appEnv, profiled ? profiledChildOptions('worker') : {});
  state.workerPid = state.worker.pid;
  return state.worker;
}

/** Graceful (SIGTERM): the worker finishes what it holds, and purchases pile up unwritten meanwhile. */
export async function stopWorker() {
  await stopChild(state.worker);
  state.workerPid = undefined;
}

// ---------------------------------------------------------------------------------------------
// Children

/**
 * A node script as a child whose output goes to a log file in TMP. Its death before we stop it ends
 * the run (with its last log lines): every later figure would be wrong.
 */
export function startChild(name, script, env, { nodeArgs = [], ipc = false, env: extraEnv = {} } = {}) {
  const logPath = path.join(TMP, `${name}-${Date.now()}.log`);
  const args = ['--require', orphanGuard(), ...nodeArgs, script];
  const childEnv = { ...env, ...extraEnv };
  const { child, exited } = spawnLogged(process.execPath, args, { logFile: logPath, env: childEnv, cwd: ROOT, ipc });
  child.logPath = logPath;
  child.stopping = false;
  child.exited = exited;
  state.children.add(child);
  exited.then(({ code, signal }) => {
    state.children.delete(child);
    if (!child.stopping) childDied(name, code ?? signal, logPath);
  });
  return child;
}

export function childDied(name, how, logPath) {
  if (state.cleaning) return;
  state.keepLogs = true;
  console.error(`[bench] ${name} exited unexpectedly (${how}); last log lines:\n${tail(logPath, LOG_LINES_SHOWN)}`);
  cleanup().then(() => process.exit(1));
}

/**
 * A preload for every child (no app code changes): if the bench dies without cleaning up (SIGKILL),
 * the child notices it was re-parented and stops itself (SIGTERM, so the app shuts down normally).
 */
function orphanGuard() {
  const file = path.join(TMP, 'orphan-guard.cjs');
  if (!existsSync(file)) {
    writeFileSync(
      file,
      `const parent = process.ppid;
let stopping = false;
setInterval(() => {
  if (stopping || process.ppid === parent) return;
  stopping = true;
  process.kill(process.pid, 'SIGTERM');
  setTimeout(() => process.exit(1), 15000).unref();
}, 1000).unref();
`,
    );
  }
  return file;
}

export async function stopChild(child, graceMs = 15_000) {
  child.stopping = true;
  await terminate(child, child.exited, graceMs);
}

/** Until GET `url` answers 200 (the API's sale list, the ceiling's health). */
export async function waitForHttp(url, child, timeoutMs = 60_000) {
  const answered = await waitUntil(async () => child.exitCode !== null || (await httpAnswers(url)), timeoutMs);
  if (child.exitCode !== null) throw new Error(`${url}: the process exited during startup`);
  if (!answered)
    throw new Error(
      `GET ${url} did not answer 200 within ${timeoutMs / 1000}s; log:\n${tail(child.logPath, LOG_LINES_SHOWN)}`,
    );
}

/** The worker has no HTTP port; its boot log line says it is consuming. */
export async function waitForLog(child, text, timeoutMs = 60_000) {
  if (await waitUntil(() => readFileSync(child.logPath, 'utf8').includes(text), timeoutMs, 100)) return;
  throw new Error(
    `no "${text}" in ${child.logPath} within ${timeoutMs / 1000}s:\n${tail(child.logPath, LOG_LINES_SHOWN)}`,
  );
}

// ---------------------------------------------------------------------------------------------
// Cleanup: idempotent, runs on success, failure and signals

export function cleanup() {
  state.cleaning ??= (async () => {
    state.loadRun?.stop();
    // Let an in-flight pipeline of submit tokens land before the scan, so none is missed.
    await sleep(200);
    await Promise.all([...state.children].map((child) => stopChild(child, 5_000).catch(() => {})));
    await state.redisCluster?.stop().catch(() => {});
    if (state.privateRedis) {
      // Its keys go with it.
      state.redis?.disconnect();
      await state.privateRedis.stop().catch(() => {});
    } else if (state.redis) {
      await deleteRedisKeys();
      state.redis.disconnect();
    }
    await dropDatabase();
    // Child logs (and the profiler preload) live in TMP: kept when something went wrong.
    if (state.keepLogs) log(`logs kept in ${TMP}`);
    else rmSync(TMP, { recursive: true, force: true });
  })();
  return state.cleaning;
}

async function deleteRedisKeys() {
  const { redis } = state;
  try {
    let deleted = 0;
    for (const pattern of [`${REDIS_KEY_PREFIX}:*`, `${QUEUE_PREFIX}:*`]) {
      let cursor = '0';
      do {
        const [nextCursor, found] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 5000);
        cursor = nextCursor;
        if (found.length) deleted += await redis.unlink(...found);
      } while (cursor !== '0');
    }
    log(`deleted ${deleted} Redis keys`);
  } catch (error) {
    console.error(`[bench] could not delete Redis keys ${REDIS_KEY_PREFIX}:* / ${QUEUE_PREFIX}:*: ${error.message}`);
  }
}

async function dropDatabase() {
  if (!state.mysql) return;
  for (const name of [...(state.databaseCreated ? [DB_NAME] : []), ...state.extraDatabases]) {
    try {
      await state.mysql.query(`DROP DATABASE IF EXISTS \`${name}\``);
      log(`dropped database ${name}`);
    } catch (error) {
      console.error(`[bench] could not drop database ${name}: ${error.message}`);
    }
  }
  await state.mysql.end().catch(() => {});
}
