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
import { Buffer } from 'node:buffer';
import { spawn, spawnSync } from 'node:child_process';
import {
  accessSync,
  constants,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  closeSync,
} from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';

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
      const redis = await startRedis(redisPlan.binary, dataDir, log, onUnexpectedExit);
      started.push(redis);
      redisUrl = redis.url;
    }
    let databaseUrl = mysqlPlan.url;
    if (mysqlPlan.kind === 'private') {
      const mysql = await startMysql(mysqlPlan, dataDir, log, onUnexpectedExit);
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
  if (existing) return existing;
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
  // MariaDB first: on Debian `mysqld` is usually a symlink to it anyway.
  const server = findExecutable(['mariadbd', 'mysqld']);
  if (!server) return { kind: 'missing', what: 'mysql' };
  const mariadb = /mariadb/i.test(spawnSync(server, ['--version'], { encoding: 'utf8' }).stdout ?? '');
  const installDb = mariadb ? findExecutable(['mariadb-install-db', 'mysql_install_db']) : null;
  if (mariadb && !installDb) return { kind: 'missing', what: 'mysql' };
  return { kind: 'private', server, mariadb, installDb };
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

// ---------------------------------------------------------------------------------------------
// Probes: does a server answer at this URL?

/** Sends PING (after AUTH when the URL has a password) over a raw socket and expects +PONG. */
export function redisAnswers(url, timeoutMs = 1_000) {
  const parsed = new URL(url);
  const commands = [];
  if (parsed.password) {
    const auth = parsed.username ? ['AUTH', parsed.username, parsed.password] : ['AUTH', parsed.password];
    commands.push(auth.map(decodeURIComponent));
  }
  commands.push(['PING']);
  // RESP arrays, so a password with spaces or quotes needs no escaping.
  const request = commands
    .map((args) => `*${args.length}\r\n` + args.map((arg) => `$${Buffer.byteLength(arg)}\r\n${arg}\r\n`).join(''))
    .join('');
  const port = Number(parsed.port || 6379);
  const host = parsed.hostname || '127.0.0.1';
  const connect =
    parsed.protocol === 'rediss:'
      ? () => tls.connect({ host, port, servername: host })
      : () => net.connect({ host, port });
  return probe(
    connect,
    timeoutMs,
    (socket) => socket.write(request),
    (received) => {
      if (received.includes('+PONG')) return true;
      if (received.startsWith('-') || received.includes('\r\n-')) return false; // e.g. -NOAUTH, -WRONGPASS
      return undefined; // keep reading
    },
  );
}

/** Connects and waits for the server's greeting packet (protocol version 10) — enough to know it is up. */
export function mysqlAnswers(url, timeoutMs = 1_000) {
  const parsed = new URL(url);
  const port = Number(parsed.port || 3306);
  const host = parsed.hostname || '127.0.0.1';
  return probe(
    () => net.connect({ host, port }),
    timeoutMs,
    () => {},
    (_text, bytes) => {
      // 4-byte packet header, then the payload's first byte: 0x0a = handshake, 0xff = error (e.g. too many connections).
      if (bytes.length < 5) return undefined;
      return bytes[4] === 0x0a;
    },
  );
}

/** One connection; `decide` sees everything received so far and returns true/false, or undefined to wait. */
function probe(connect, timeoutMs, onConnect, decide) {
  return new Promise((resolve) => {
    let settled = false;
    let bytes = Buffer.alloc(0);
    const socket = connect();
    const finish = (result) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(() => finish(false), timeoutMs);
    socket.once(socket instanceof tls.TLSSocket ? 'secureConnect' : 'connect', () => onConnect(socket));
    socket.on('data', (chunk) => {
      bytes = Buffer.concat([bytes, chunk]);
      const verdict = decide(bytes.toString('latin1'), bytes);
      if (verdict !== undefined) finish(verdict);
    });
    socket.on('error', () => finish(false));
    socket.on('close', () => finish(false));
  });
}

// ---------------------------------------------------------------------------------------------
// Private instances

async function startRedis(binary, dataDir, log, onUnexpectedExit) {
  const dir = path.join(dataDir, 'redis');
  mkdirSync(dir, { recursive: true });
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  log(`Redis: starting a private redis-server on port ${port} (data in ${shortPath(dir)})`);
  // prettier-ignore
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'yes', '--dir', dir, '--daemonize', 'no'];
  const instance = spawnServer('redis', binary, args, path.join(dataDir, 'redis.log'), onUnexpectedExit);
  await waitForReady(instance, () => redisAnswers(url), 15_000);
  return { url, stop: instance.stop };
}

async function startMysql(plan, dataDir, log, onUnexpectedExit) {
  const datadir = path.join(dataDir, 'mysql');
  const logFile = path.join(dataDir, 'mysql.log');
  mkdirSync(dataDir, { recursive: true });
  // mariadbd/mysqld refuse to run as root unless told to explicitly.
  const asRoot = process.getuid?.() === 0 ? ['--user=root'] : [];
  if (!existsSync(datadir)) initialiseMysql(plan, datadir, logFile, asRoot, log);

  const port = await freePort();
  const url = `mysql://root@127.0.0.1:${port}/${DATABASE_NAME}`;
  log(`MySQL: starting a private ${path.basename(plan.server)} on port ${port} (data in ${shortPath(datadir)})`);
  const args = [
    '--no-defaults', // ignore /etc/mysql/my.cnf: it names the system instance's socket, pid file and user
    `--datadir=${datadir}`,
    `--port=${port}`,
    '--bind-address=127.0.0.1',
    `--socket=${socketPath(dataDir, port)}`,
    `--pid-file=${path.join(dataDir, 'mysql.pid')}`,
    ...asRoot,
    // Oracle MySQL also opens the X protocol on 33060, which would clash with a system instance.
    ...(plan.mariadb ? [] : ['--mysqlx=OFF']),
  ];
  const instance = spawnServer('mysql', plan.server, args, logFile, onUnexpectedExit);
  await waitForReady(
    instance,
    () => mysqlAnswers(url),
    60_000,
    'if a previous run was killed, its server may still hold .data/mysql; see .data/mysql.pid',
  );
  return { url, stop: instance.stop };
}

/**
 * Creates the system tables once, with root reachable over TCP with an empty password.
 * It initialises into a temporary directory and renames it on success, so an interrupted
 * first run never leaves a half-initialised datadir that would then be mistaken for a good one.
 */
function initialiseMysql(plan, datadir, logFile, asRoot, log) {
  const staging = `${datadir}.initialising`;
  rmSync(staging, { recursive: true, force: true });
  log(`MySQL: initialising a new data directory (once) in ${shortPath(datadir)}`);
  const [command, args] = plan.mariadb
    ? [
        plan.installDb,
        [
          '--no-defaults',
          `--datadir=${staging}`,
          '--auth-root-authentication-method=normal',
          '--skip-test-db',
          ...asRoot,
        ],
      ]
    : [plan.server, ['--no-defaults', '--initialize-insecure', `--datadir=${staging}`, ...asRoot]];
  const out = openSync(logFile, 'a');
  const result = spawnSync(command, args, { stdio: ['ignore', out, out] });
  closeSync(out);
  if (result.status !== 0) {
    throw new Error(`${path.basename(command)} failed (exit ${result.status ?? result.signal}):\n${tail(logFile)}`);
  }
  renameSync(staging, datadir);
}

/** Unix socket paths are limited to ~104 bytes; a deep checkout would exceed that. */
function socketPath(dataDir, port) {
  const preferred = path.join(dataDir, 'mysql.sock');
  return preferred.length < 100 ? preferred : path.join(os.tmpdir(), `flash-sale-mysql-${port}.sock`);
}

/**
 * Spawns a server in its own process group, output to a log file. Its own group means a Ctrl-C in
 * the terminal does not reach it: the caller stops it after the app, so the app never sees its
 * database vanish mid-shutdown.
 */
function spawnServer(name, command, args, logFile, onUnexpectedExit) {
  const out = openSync(logFile, 'a');
  const child = spawn(command, args, { stdio: ['ignore', out, out], detached: true });
  closeSync(out);
  // A failure to spawn at all emits 'error' and no 'exit'; both end the process's life here.
  const exited = new Promise((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    child.once('error', (error) => resolve({ code: error.code, signal: null }));
  });
  // Only a death after the server was ready and before we stopped it is "unexpected".
  let watching = false;
  exited.then(({ code, signal }) => {
    if (watching) onUnexpectedExit(name, code, signal);
  });
  killOnExit.add(child);
  const stop = async () => {
    watching = false;
    await terminate(child, exited, 20_000);
    killOnExit.delete(child);
  };
  const watch = () => (watching = true);
  return { name, child, exited, logFile, stop, watch };
}

async function waitForReady(instance, answers, timeoutMs, hint = '') {
  let exitedEarly = null;
  instance.exited.then((result) => (exitedEarly = result));
  const ready = await waitUntil(async () => exitedEarly !== null || (await answers()), timeoutMs);
  if (ready && exitedEarly === null) return instance.watch();
  await instance.stop();
  const why = exitedEarly
    ? `exited with ${exitedEarly.code ?? exitedEarly.signal}`
    : `did not answer within ${timeoutMs / 1000}s`;
  throw new Error(
    `private ${instance.name} ${why}${hint ? ` (${hint})` : ''}. Last lines of ${instance.logFile}:\n${tail(instance.logFile)}`,
  );
}

// ---------------------------------------------------------------------------------------------
// Small helpers, also used by scripts/start.mjs

/**
 * SIGTERM, then SIGKILL after `graceMs`. Resolves when the process has exited. Our children run
 * detached, each the leader of its own process group: the signal goes to the whole group, so a child
 * that is itself a launcher (`npm run dev` → vite) does not leave its own children behind.
 */
export async function terminate(child, exited, graceMs) {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  signalGroup(child, 'SIGTERM');
  const timer = setTimeout(() => signalGroup(child, 'SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

function signalGroup(child, signal) {
  try {
    process.kill(-child.pid, signal);
  } catch {
    child.kill(signal); // not a group leader (or already gone)
  }
}

/**
 * Children started detached survive their parent, so if this process dies from an uncaught error
 * they are killed here. ('exit' handlers must be synchronous: SIGKILL is the only option left.)
 */
export const killOnExit = new Set();
process.on('exit', () => {
  for (const child of killOnExit) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

/** The "bind port 0" trick: the OS picks a free port, which we release and hand to the server. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Polls `check` every 250 ms until it returns true or `timeoutMs` passes. */
export async function waitUntil(check, timeoutMs, intervalMs = 250) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** Looks in PATH and in the sbin/Homebrew directories that are often missing from a user's PATH. */
export function findExecutable(names) {
  const dirs = [
    ...(process.env.PATH ?? '').split(path.delimiter),
    '/usr/sbin',
    '/usr/local/sbin',
    '/usr/local/bin',
    '/opt/homebrew/bin',
    '/opt/homebrew/sbin',
  ].filter(Boolean);
  for (const name of names) {
    for (const dir of dirs) {
      const candidate = path.join(dir, name);
      try {
        accessSync(candidate, constants.X_OK);
        return candidate;
      } catch {
        // not here
      }
    }
  }
  return null;
}

/** `.data/mysql` when under the current directory, the absolute path otherwise. */
function shortPath(file) {
  const relative = path.relative(process.cwd(), file);
  return relative && !relative.startsWith('..') ? relative : file;
}

function redact(url) {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.toString();
}

function tail(file, lines = 15) {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}
