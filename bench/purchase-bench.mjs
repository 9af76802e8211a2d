#!/usr/bin/env node
/**
 * `npm run bench`: purchase-path benchmark of the built API and worker, on throwaway state.
 *
 * One run:
 *   0. builds (`tsc -b`) only if a dist entry point is missing;
 *   1. creates a private database `flash_sale_bench_<rand>` (migrated with libs/db/dist/migrate.js) and
 *      private Redis key / queue prefixes, then starts the API and the worker as child processes;
 *   2. creates the sales through the admin API;
 *   3. live sale: 2 s warm-up (own users, not recorded), then BENCH_DURATION s of purchases, each request
 *      a different (guest JWT, submit token) pair prepared beforehand, so the API does the full
 *      reservation + enqueue work every time and the load generator does no crypto while measuring;
 *   4. sold-out sale (stock 1, bought once): the same load, every answer should be 410;
 *   5. drain: worker stopped, BENCH_DRAIN_ORDERS purchases pile up in the queue, a new worker is started
 *      and orders/s is measured from the first order row to the last; the sale is then audited;
 *   6. prints a markdown table and writes bench/results/latest.{json,md};
 *   7. always cleans up: children, database, Redis keys (also on failure and Ctrl-C).
 *
 * Environment (all optional):
 *   BENCH_DURATION (10 s) · BENCH_WARMUP (2 s) · BENCH_CONNECTIONS (64) · BENCH_USERS (150000 pairs per
 *   measured scenario) · BENCH_DRAIN_ORDERS (20000) · BENCH_CPU_PROF=1 (CPU-profile the API during the
 *   live scenario and print its top frames) · REDIS_URL (redis://127.0.0.1:6379) ·
 *   BENCH_MYSQL_URL (mysql://root@127.0.0.1:3306, server only: the database name is ours).
 *
 * Everything runs on one machine, so the load generator, Redis, MariaDB, the API and the worker share
 * the CPUs: per-process CPU use is sampled from /proc for every scenario so saturation is visible, and
 * Redis command time per response (INFO commandstats) shows what the single Redis thread spends.
 */
import { spawn, spawnSync } from 'node:child_process';
import { Buffer } from 'node:buffer';
import { createSecretKey, randomBytes } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(path.join(ROOT, 'package.json'));

// ---------------------------------------------------------------------------------------------
// Settings

const intEnv = (name, fallback) => {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, got "${raw}"`);
  return value;
};

const SETTINGS = {
  durationS: intEnv('BENCH_DURATION', 10),
  warmupS: intEnv('BENCH_WARMUP', 2),
  connections: intEnv('BENCH_CONNECTIONS', 64),
  users: intEnv('BENCH_USERS', 150_000),
  drainOrders: intEnv('BENCH_DRAIN_ORDERS', 20_000),
  liveStock: 2_000_000,
  cpuProfile: process.env.BENCH_CPU_PROF === '1',
};
const RUN_ID = randomBytes(4).toString('hex');
const DB_NAME = `flash_sale_bench_${RUN_ID}`;
const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const MYSQL_SERVER_URL = (process.env.BENCH_MYSQL_URL || 'mysql://root@127.0.0.1:3306').replace(/\/+$/, '');
const DATABASE_URL = `${MYSQL_SERVER_URL}/${DB_NAME}`;
const REDIS_KEY_PREFIX = `fs-bench-${RUN_ID}`;
const QUEUE_PREFIX = `{fs-bench-${RUN_ID}}`; // braces: one hash tag, as the app's default prefix has
const JWT_SECRET = 'bench-jwt-secret-not-for-production-0123456789';
const ADMIN_PASSWORD = 'bench-admin-password';
const TOKEN_TTL_S = 600; // submit tokens must outlive the whole run (prepared before each scenario)
const TMP = path.join(os.tmpdir(), `flash-sale-bench-${RUN_ID}`);
const RESULTS_DIR = path.join(ROOT, 'bench', 'results');

const log = (message) => console.log(`[bench] ${message}`);

// ---------------------------------------------------------------------------------------------
// State that cleanup() must undo, whatever happened

const state = {
  children: new Set(),
  redis: null,
  mysql: null,
  queue: null,
  databaseCreated: false,
  workerPid: undefined,
  loadRun: undefined,
  interrupted: false,
  keepLogs: false,
  cleaning: null,
};

main().then(
  async (exitCode) => {
    await cleanup();
    process.exit(exitCode);
  },
  async (error) => {
    if (state.interrupted) return; // the signal handler below cleans up and exits
    console.error(`[bench] FAILED: ${error?.stack ?? error}`);
    state.keepLogs = true;
    await cleanup();
    process.exit(1);
  },
);
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, async () => {
    log(`${signal}: cleaning up`);
    state.interrupted = true;
    await cleanup();
    process.exit(130);
  });
}

async function main() {
  process.chdir(ROOT);
  mkdirSync(TMP, { recursive: true });
  ensureBuilt();

  // Loaded only now: the build above may have just produced them.
  const autocannon = require('autocannon');
  const jwt = require('jsonwebtoken');
  const { Redis } = require('ioredis');
  const mysql = require('mysql2/promise');
  const { Queue } = require('bullmq');
  const { KeyBuilder } = require('@flash-sale/redis'); // the app's own key names, never re-typed here
  const { QueueName } = require('@flash-sale/queue');
  const keys = new KeyBuilder(REDIS_KEY_PREFIX);

  state.redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  const server = new URL(MYSQL_SERVER_URL);
  state.mysql = await mysql.createConnection({
    host: server.hostname,
    port: Number(server.port || 3306),
    user: decodeURIComponent(server.username || 'root'),
    password: decodeURIComponent(server.password || ''),
  });

  // 1. Database, then the two processes.
  log(`run ${RUN_ID}: database ${DB_NAME}, Redis prefixes ${REDIS_KEY_PREFIX} / ${QUEUE_PREFIX}`);
  state.databaseCreated = true; // set before migrating: a half-created database is dropped too
  runOrThrow(process.execPath, ['libs/db/dist/migrate.js'], { ...process.env, DATABASE_URL });
  await state.mysql.query(`USE \`${DB_NAME}\``);

  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const childEnv = {
    ...process.env,
    NODE_ENV: 'production', // as deployed; every secret is set, so production mode boots
    PORT: String(port),
    HOST: '127.0.0.1',
    DATABASE_URL,
    REDIS_URL,
    REDIS_KEY_PREFIX,
    QUEUE_PREFIX,
    JWT_SECRET,
    ADMIN_PASSWORD,
    PAYMENT_WEBHOOK_SECRET: 'bench-payment-webhook-secret',
    SUBMIT_TOKEN_TTL_SECONDS: String(TOKEN_TTL_S),
  };
  const profilePath = path.join(TMP, 'api.cpuprofile');
  const apiArgs = SETTINGS.cpuProfile ? ['--require', writeProfilerPreload()] : [];
  const api = startChild(
    'api',
    'apps/api/dist/main.js',
    { ...childEnv, BENCH_CPU_PROFILE_PATH: profilePath },
    apiArgs,
    {
      ipc: SETTINGS.cpuProfile,
    },
  );
  let worker = startChild('worker', 'apps/worker/dist/main.js', childEnv);
  await waitForApi(baseUrl, api);
  await waitForLog(worker, 'Worker consuming');
  log(`API on ${baseUrl} (pid ${api.pid}), worker pid ${worker.pid}`);

  state.queue = new Queue(QueueName.Orders, { connection: state.redis, prefix: QUEUE_PREFIX });
  const http = httpClient(baseUrl);
  const cpu = cpuSampler();

  // 2. Sales, through the admin API like an operator would.
  const admin = (await http.post('/api/auth/admin', { password: ADMIN_PASSWORD }, undefined, 201)).token;
  const createSale = (name, stock) =>
    http.post(
      '/api/admin/sales',
      { name, priceCents: 1999, stock, perUserLimit: 1, endsAt: new Date(Date.now() + 3_600_000).toISOString() },
      admin,
      201,
    );
  const liveSale = await createSale('bench live', SETTINGS.liveStock);
  const soldOutSale = await createSale('bench sold out', 1);

  // Guest JWTs are signed here with the API's secret, as POST /api/auth/guest would. A KeyObject
  // secret, because jsonwebtoken 9 first tries to parse a string secret as a PEM public key and
  // that failed parse costs ~0.5 ms per call (see the README): 50x slower than signing itself.
  const jwtKey = createSecretKey(Buffer.from(JWT_SECRET));
  let pairSets = 0;
  /** `count` (guest JWT, submit token) pairs for one sale, the tokens written straight into Redis. */
  async function preparePairs(saleId, count) {
    const tag = `${RUN_ID}s${pairSets++}`;
    const auth = new Array(count);
    const body = new Array(count);
    for (let start = 0; start < count; start += 10_000) {
      // Cleanup may have started (Ctrl-C): writing keys now would outlive its scan.
      if (state.cleaning) throw new Error('interrupted');
      const pipeline = state.redis.pipeline();
      for (let i = start; i < Math.min(count, start + 10_000); i++) {
        const userId = `b${tag}u${i}`; // within the API's user-id alphabet [A-Za-z0-9_-]
        const token = randomBytes(18).toString('base64url'); // like SaleRedisRepository.issueToken
        auth[i] =
          `Bearer ${jwt.sign({ sub: userId, name: `Bench ${i}`, role: 'guest' }, jwtKey, { algorithm: 'HS256', expiresIn: 3600 })}`;
        body[i] = JSON.stringify({ token });
        pipeline.set(keys.sale(saleId).token(token), userId, 'EX', TOKEN_TTL_S);
      }
      const replies = await pipeline.exec();
      const failed = replies.find(([error]) => error);
      if (failed) throw failed[0];
    }
    return { count, auth, body };
  }

  /**
   * One autocannon run. Every request takes the next prepared pair (setupRequest is called once per
   * request sent, plus once per connection up front); latencies and statuses are recorded from the
   * 'response' event so p95 can be reported (autocannon's own histogram has no p95).
   */
  async function load({ label, saleId, pairs, expectStatus, durationS, amount }) {
    let next = 0;
    const latencies = [];
    const statuses = {};
    const instance = autocannon({
      url: baseUrl,
      connections: SETTINGS.connections,
      ...(amount ? { amount } : { duration: durationS }),
      timeout: 10,
      requests: [
        {
          method: 'POST',
          path: `/api/sales/${saleId}/purchase`,
          setupRequest(request) {
            const i = next++ % pairs.count; // wraps only if BENCH_USERS is too small (reported below)
            request.headers = { 'content-type': 'application/json', authorization: pairs.auth[i] };
            request.body = pairs.body[i];
            return request;
          },
        },
      ],
    });
    let lastResponseAt = 0;
    instance.on('response', (_client, status, _bytes, ms) => {
      lastResponseAt = performance.now();
      latencies.push(ms);
      statuses[status] = (statuses[status] ?? 0) + 1;
    });
    const before = cpu.snapshot({ api: api.pid, worker: state.workerPid });
    const redisBefore = await redisCommandStats();
    state.loadRun = instance;
    const startedAt = performance.now();
    const result = await instance;
    state.loadRun = undefined;
    const cpuUse = cpu.since(before);
    const redisCommands = diffCommandStats(redisBefore, await redisCommandStats(), latencies.length);
    const completed = latencies.length;
    const unexpected = completed - (statuses[expectStatus] ?? 0);
    const summary = {
      scenario: label,
      connections: SETTINGS.connections,
      durationS: result.duration,
      requests: completed,
      // A timed run: autocannon's mean of its per-second samples. A fixed-count run: our own clock,
      // because autocannon notices the last response only at its next 1 s sample tick, which rounds
      // the duration up to whole seconds (20,000 requests in 5.2 s would read as 6 s).
      reqPerSec: amount ? round(completed / ((lastResponseAt - startedAt) / 1000)) : round(result.requests.average),
      reqPerSecBasis: amount ? 'responses / (last response - start)' : 'autocannon mean of 1 s samples',
      elapsedToLastResponseS: round((lastResponseAt - startedAt) / 1000, 2),
      reqPerSecOverall: round(completed / result.duration),
      latencyMs: latencySummary(latencies),
      expectedStatus: expectStatus,
      statusCounts: statuses,
      unexpectedStatuses: unexpected,
      socketErrors: result.errors,
      timeouts: result.timeouts,
      errors: unexpected + result.errors,
      pairsPrepared: pairs.count,
      pairsUsed: Math.min(next, pairs.count),
      pairsReused: Math.max(0, next - pairs.count),
      cpu: cpuUse,
      redisCommands,
    };
    log(
      `${label}: ${summary.reqPerSec} req/s, p50 ${summary.latencyMs.p50} p95 ${summary.latencyMs.p95} ` +
        `p99 ${summary.latencyMs.p99} ms, ${completed} responses ${JSON.stringify(statuses)}, ` +
        `socket errors ${result.errors}, timeouts ${result.timeouts}`,
    );
    log(`${label}: CPU ${formatCpu(cpuUse)}`);
    log(`${label}: Redis ${formatRedis(redisCommands)}`);
    if (summary.pairsReused > 0)
      log(`WARNING ${label}: ${summary.pairsReused} requests reused a pair; raise BENCH_USERS`);
    if (unexpected + result.errors > 0)
      log(`WARNING ${label}: ${unexpected} responses were not ${expectStatus}, ${result.errors} socket errors`);
    return summary;
  }

  state.workerPid = worker.pid;
  const results = {
    runId: RUN_ID,
    startedAt: new Date().toISOString(),
    machine: machineInfo(),
    app: appInfo(),
    settings: { ...SETTINGS },
    scenarios: [],
    checks: [],
  };
  const check = (name, pass, detail) => {
    results.checks.push({ name, pass, detail });
    if (!pass) log(`CHECK FAILED: ${name} (${detail})`);
  };

  // 3. Live sale. Warm-up with its own users (JIT, connection pools, Lua script cache), not recorded.
  log(`warm-up ${SETTINGS.warmupS}s on sale ${liveSale.id}`);
  const warmPairs = await preparePairs(liveSale.id, Math.min(SETTINGS.users, 60_000));
  const warmup = await load({
    label: 'warm-up',
    saleId: liveSale.id,
    pairs: warmPairs,
    expectStatus: 202,
    durationS: SETTINGS.warmupS,
  });
  results.warmup = { requests: warmup.requests, reqPerSec: warmup.reqPerSec, errors: warmup.errors };

  log(`preparing ${SETTINGS.users} pairs for the live sale`);
  const livePairs = await preparePairs(liveSale.id, SETTINGS.users);
  if (SETTINGS.cpuProfile) await profilerCommand(api, 'cpu-profile:start', 'cpu-profile:started');
  const live = await load({
    label: 'live sale (202)',
    saleId: liveSale.id,
    pairs: livePairs,
    expectStatus: 202,
    durationS: SETTINGS.durationS,
  });
  if (SETTINGS.cpuProfile) {
    await profilerCommand(api, 'cpu-profile:stop', 'cpu-profile:written');
    results.apiProfile = await readProfile(profilePath);
  }
  live.queueBacklogAtEnd = await queueCounts();
  log(`queue right after the live run: ${JSON.stringify(live.queueBacklogAtEnd)}`);
  results.scenarios.push(live);
  check(
    'live sale: every answer 202',
    live.errors === 0 && live.timeouts === 0,
    `${live.errors} errors, ${live.timeouts} timeouts`,
  );

  // 4. Sold-out sale: its single unit goes first, then the same load must be refused with 410.
  const firstBuyer = await preparePairs(soldOutSale.id, 1);
  await http.raw('POST', `/api/sales/${soldOutSale.id}/purchase`, firstBuyer.body[0], firstBuyer.auth[0], 202);
  log(`preparing ${SETTINGS.users} pairs for the sold-out sale`);
  const soldOutPairs = await preparePairs(soldOutSale.id, SETTINGS.users);
  const soldOut = await load({
    label: 'sold-out sale (410)',
    saleId: soldOutSale.id,
    pairs: soldOutPairs,
    expectStatus: 410,
    durationS: SETTINGS.durationS,
  });
  results.scenarios.push(soldOut);
  check(
    'sold-out sale: every answer 410',
    soldOut.errors === 0 && soldOut.timeouts === 0,
    `${soldOut.errors} errors, ${soldOut.timeouts} timeouts`,
  );

  // The live sale's reservations are still being written: let the worker finish them so the drain
  // measurement below sees only its own orders, and audit both sales while things are quiet.
  const backlogStart = Date.now();
  await waitForEmptyQueue(600_000);
  results.liveBacklogDrainS = round((Date.now() - backlogStart) / 1000);
  log(`live backlog written in ${results.liveBacklogDrainS}s after the sold-out run`);
  results.audits = {};
  for (const [name, sale] of [
    ['live', liveSale],
    ['soldOut', soldOutSale],
  ]) {
    const audit = await http.get(`/api/admin/sales/${sale.id}/audit`, admin);
    results.audits[name] = pickAudit(audit);
    check(`audit ${name} sale ok`, audit.ok === true, JSON.stringify(results.audits[name]));
  }

  // 5. Drain. Stop the worker (graceful SIGTERM) so purchases pile up in the queue.
  log('stopping the worker');
  await stopChild(worker);
  state.workerPid = undefined;
  const drainSale = await createSale('bench drain', SETTINGS.drainOrders);
  const drainPairs = await preparePairs(drainSale.id, SETTINGS.drainOrders + SETTINGS.connections * 2);
  const fill = await load({
    label: 'purchase, worker stopped',
    saleId: drainSale.id,
    pairs: drainPairs,
    expectStatus: 202,
    amount: SETTINGS.drainOrders,
  });
  results.scenarios.push(fill);
  const queued = fill.statusCounts[202] ?? 0;
  const waitingJobs = await queueCounts();
  log(`${queued} reservations accepted; queue ${JSON.stringify(waitingJobs)}`);
  check('drain: all purchases accepted', queued === SETTINGS.drainOrders, `${queued} of ${SETTINGS.drainOrders}`);

  const commitsBefore = await globalStatus();
  const workerStartedAt = Date.now();
  worker = startChild('worker', 'apps/worker/dist/main.js', childEnv);
  state.workerPid = worker.pid;
  const cpuBefore = cpu.snapshot({ api: api.pid, worker: worker.pid });
  const drain = await measureDrain(drainSale.id, queued, workerStartedAt);
  drain.cpu = cpu.since(cpuBefore);
  await waitForEmptyQueue(120_000); // jobs complete just after their commit
  const commitsAfter = await globalStatus();
  drain.mysqlTransactions = {
    // Server-wide counter deltas: anything else using this MariaDB during the drain is counted too.
    commits: commitsAfter.Com_commit - commitsBefore.Com_commit,
    rollbacks: commitsAfter.Com_rollback - commitsBefore.Com_rollback,
  };
  drain.ordersPerTransaction =
    drain.mysqlTransactions.commits > 0 ? round(drain.rows / drain.mysqlTransactions.commits) : null;
  const drainAudit = await http.get(`/api/admin/sales/${drainSale.id}/audit`, admin);
  drain.audit = pickAudit(drainAudit);
  results.drain = drain;
  log(
    `drain: ${drain.rows} rows, ${drain.ordersPerSec} orders/s (first→last row ${drain.firstToLastS}s; ` +
      `worker start→last row ${drain.workerStartToLastS}s), ~${drain.mysqlTransactions.commits} commits, ` +
      `audit ok=${drainAudit.ok}; CPU ${formatCpu(drain.cpu)}`,
  );
  check('drain: every reservation became a row', drain.rows === queued, `${drain.rows} of ${queued}`);
  check('audit drain sale ok', drainAudit.ok === true, JSON.stringify(drain.audit));

  // 6. Report.
  results.finishedAt = new Date().toISOString();
  const markdown = renderMarkdown(results);
  console.log(`\n${markdown}`);
  mkdirSync(RESULTS_DIR, { recursive: true });
  writeFileSync(path.join(RESULTS_DIR, 'latest.json'), `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(path.join(RESULTS_DIR, 'latest.md'), markdown);
  log(`wrote bench/results/latest.json and bench/results/latest.md`);
  return results.checks.every((c) => c.pass) ? 0 : 1;

  // -------------------------------------------------------------------------------------------
  // Helpers that need the clients above

  /** Server-wide `INFO commandstats` (so other users of this Redis are counted too). */
  async function redisCommandStats() {
    const stats = {};
    for (const line of (await state.redis.info('commandstats')).split('\n')) {
      const match = line.match(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/);
      if (match) stats[match[1]] = { calls: Number(match[2]), usec: Number(match[3]) };
    }
    return stats;
  }

  async function queueCounts() {
    return state.queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'failed');
  }

  async function waitForEmptyQueue(timeoutMs) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const counts = await queueCounts();
      if (counts.waiting + counts.active + counts.delayed + counts.prioritized === 0) return counts;
      if (Date.now() > deadline)
        throw new Error(`queue did not drain in ${timeoutMs / 1000}s: ${JSON.stringify(counts)}`);
      await sleep(200);
    }
  }

  async function globalStatus() {
    const [rows] = await state.mysql.query("SHOW GLOBAL STATUS WHERE Variable_name IN ('Com_commit', 'Com_rollback')");
    return Object.fromEntries(rows.map((row) => [row.Variable_name, Number(row.Value)]));
  }

  /** Polls the order count every 50 ms: orders/s = rows / (time of the first row → time of the last). */
  async function measureDrain(saleId, expected, workerStartedAt) {
    let firstAt;
    let count = 0;
    const deadline = Date.now() + 600_000;
    while (count < expected) {
      if (Date.now() > deadline) throw new Error(`drain stalled at ${count} of ${expected} rows`);
      if (worker.exitCode !== null) throw new Error(`the worker exited during the drain (see ${worker.logPath})`);
      const [[row]] = await state.mysql.query('SELECT COUNT(*) AS n FROM orders WHERE sale_id = ?', [saleId]);
      count = Number(row.n);
      if (count > 0 && firstAt === undefined) firstAt = Date.now();
      if (count < expected) await sleep(50);
    }
    const lastAt = Date.now();
    // Cross-check from the rows' own timestamps (set by MySQL per statement, so per batch).
    const [[span]] = await state.mysql.query(
      'SELECT TIMESTAMPDIFF(MICROSECOND, MIN(created_at), MAX(created_at)) AS us FROM orders WHERE sale_id = ?',
      [saleId],
    );
    const firstToLastS = (lastAt - firstAt) / 1000;
    return {
      orders: expected,
      rows: count,
      pollIntervalMs: 50,
      workerBootToFirstRowS: round((firstAt - workerStartedAt) / 1000),
      firstToLastS: round(firstToLastS),
      workerStartToLastS: round((lastAt - workerStartedAt) / 1000),
      ordersPerSec: round(expected / firstToLastS),
      rowTimestampSpanS: round(Number(span.us) / 1e6),
      ordersPerSecByRowTimestamps: Number(span.us) > 0 ? round(expected / (Number(span.us) / 1e6)) : null,
    };
  }
}

// ---------------------------------------------------------------------------------------------
// Build, children, HTTP

function ensureBuilt() {
  const entries = ['apps/api/dist/main.js', 'apps/worker/dist/main.js', 'libs/db/dist/migrate.js'];
  if (entries.every((entry) => existsSync(path.join(ROOT, entry)))) return;
  log('a dist entry point is missing: npx tsc -b tsconfig.json');
  runOrThrow(process.platform === 'win32' ? 'npx.cmd' : 'npx', ['tsc', '-b', 'tsconfig.json'], process.env);
}

function runOrThrow(command, args, env) {
  const result = spawnSync(command, args, { cwd: ROOT, env, stdio: 'inherit' });
  if (result.status !== 0)
    throw new Error(`${command} ${args.join(' ')} exited with ${result.status ?? result.signal}`);
}

/** A child whose output goes to a log file in TMP (a pipe nobody drains would stall it). */
function startChild(name, script, env, nodeArgs = [], { ipc = false } = {}) {
  const logPath = path.join(TMP, `${name}-${Date.now()}.log`);
  const fd = openSync(logPath, 'a');
  const stdio = ipc ? ['ignore', fd, fd, 'ipc'] : ['ignore', fd, fd];
  const child = spawn(process.execPath, [...nodeArgs, script], { cwd: ROOT, env, stdio });
  closeSync(fd);
  child.logPath = logPath;
  child.stopping = false;
  child.exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  state.children.add(child);
  child.once('exit', (code, signal) => {
    state.children.delete(child);
    if (!child.stopping && !state.cleaning) {
      state.keepLogs = true;
      console.error(`[bench] ${name} exited unexpectedly (${code ?? signal}); last log lines:\n${tail(logPath)}`);
      cleanup().then(() => process.exit(1));
    }
  });
  return child;
}

async function stopChild(child, graceMs = 15_000) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.stopping = true;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await child.exited;
  clearTimeout(timer);
}

function tail(file, lines = 20) {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

async function waitForApi(baseUrl, api, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (api.exitCode !== null) throw new Error('the API exited during startup');
    try {
      const response = await fetch(`${baseUrl}/api/sales`);
      if (response.status === 200) return;
    } catch {
      // not listening yet
    }
    await sleep(250);
  }
  throw new Error(`GET /api/sales did not answer 200 within ${timeoutMs / 1000}s; log:\n${tail(api.logPath)}`);
}

/** The worker has no HTTP port; its boot log line says it is consuming. */
async function waitForLog(child, text, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (readFileSync(child.logPath, 'utf8').includes(text)) return;
    await sleep(100);
  }
  throw new Error(`no "${text}" in ${child.logPath} within ${timeoutMs / 1000}s:\n${tail(child.logPath)}`);
}

function freePort() {
  return new Promise((resolve, reject) => {
    import('node:net').then(({ createServer }) => {
      const server = createServer();
      server.unref();
      server.on('error', reject);
      server.listen(0, '127.0.0.1', () => {
        const { port } = server.address();
        server.close(() => resolve(port));
      });
    });
  });
}

function httpClient(baseUrl) {
  async function raw(method, url, body, authorization, expectStatus) {
    const headers = { 'content-type': 'application/json' };
    if (authorization) headers.authorization = authorization;
    const response = await fetch(`${baseUrl}${url}`, { method, headers, body });
    const text = await response.text();
    if (expectStatus && response.status !== expectStatus) {
      throw new Error(`${method} ${url} answered ${response.status}, expected ${expectStatus}: ${text}`);
    }
    return text ? JSON.parse(text) : undefined;
  }
  return {
    raw,
    get: (url, token) => raw('GET', url, undefined, token && `Bearer ${token}`, 200),
    post: (url, body, token, expectStatus) =>
      raw('POST', url, JSON.stringify(body), token && `Bearer ${token}`, expectStatus),
  };
}

// ---------------------------------------------------------------------------------------------
// Measurements

function latencySummary(values) {
  if (values.length === 0) return { p50: null, p95: null, p99: null, max: null, mean: null };
  const sorted = Float64Array.from(values).sort();
  const at = (q) => round(sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]);
  const mean = sorted.reduce((sum, value) => sum + value, 0) / sorted.length;
  return { p50: at(0.5), p95: at(0.95), p99: at(0.99), max: round(sorted[sorted.length - 1]), mean: round(mean) };
}

/**
 * CPU time per process from /proc (Linux), in % of one core over an interval, plus the machine's busy
 * share of all cores: on a small box the load generator, Redis and MariaDB compete with the API.
 */
function cpuSampler() {
  const clockTicks = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout) || 100;
  const services = findServicePids();
  const ticksOf = (pid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return Number(fields[11]) + Number(fields[12]); // utime + stime
    } catch {
      return undefined;
    }
  };
  const machine = () => {
    try {
      // user nice system idle iowait irq softirq steal (guest time is already inside user)
      const [, ...values] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/);
      const numbers = values.slice(0, 8).map(Number);
      return {
        idle: numbers[3] + (numbers[4] ?? 0),
        steal: numbers[7] ?? 0,
        total: numbers.reduce((a, b) => a + b, 0),
      };
    } catch {
      return undefined;
    }
  };
  return {
    snapshot(pids) {
      const all = { ...pids, ...services };
      const ticks = {};
      for (const [name, pid] of Object.entries(all)) if (pid) ticks[name] = { pid, ticks: ticksOf(pid) };
      return { at: process.hrtime.bigint(), ticks, self: process.cpuUsage(), machine: machine() };
    },
    since(before) {
      const seconds = Number(process.hrtime.bigint() - before.at) / 1e9;
      const percent = {};
      for (const [name, { pid, ticks }] of Object.entries(before.ticks)) {
        const now = ticksOf(pid);
        if (ticks !== undefined && now !== undefined)
          percent[name] = round(((now - ticks) / clockTicks / seconds) * 100, 0);
      }
      const self = process.cpuUsage(before.self);
      percent.loadGenerator = round(((self.user + self.system) / 1e6 / seconds) * 100, 0);
      const processesTotal = Object.values(percent).reduce((sum, value) => sum + (value ?? 0), 0);
      const m = machine();
      if (m && before.machine) {
        const total = m.total - before.machine.total;
        percent.machineBusyOfAllCores = round((1 - (m.idle - before.machine.idle) / total) * 100, 0);
        // Time the hypervisor gave to other guests: high steal means a noisy neighbour, not our code.
        percent.stealOfAllCores = round(((m.steal - before.machine.steal) / total) * 100, 0);
        // Busy CPU not accounted to the processes above (another test run, the OS): in % of one core.
        const busyCores = (1 - (m.idle - before.machine.idle) / total) * os.cpus().length;
        percent.otherProcesses = Math.max(0, round(busyCores * 100 - processesTotal, 0));
      }
      return percent; // per process: % of ONE core; machine*/steal*: % of all cores
    },
  };
}

/** Redis and MariaDB/MySQL server processes on this machine, if any, for CPU accounting only. */
function findServicePids() {
  const found = {};
  try {
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      let comm;
      try {
        comm = readFileSync(`/proc/${entry}/comm`, 'utf8').trim();
      } catch {
        continue;
      }
      if (comm === 'redis-server' && !found.redis) found.redis = Number(entry);
      if ((comm === 'mariadbd' || comm === 'mysqld') && !found.mysql) found.mysql = Number(entry);
    }
  } catch {
    // not Linux: no per-service numbers
  }
  return found;
}

/** Redis time per command over a run: where the single Redis thread spends it, per HTTP response. */
function diffCommandStats(before, after, responses) {
  const rows = Object.entries(after).map(([command, { calls, usec }]) => ({
    command,
    calls: calls - (before[command]?.calls ?? 0),
    usec: usec - (before[command]?.usec ?? 0),
  }));
  const totalUsec = rows.reduce((sum, row) => sum + row.usec, 0);
  return {
    totalMs: round(totalUsec / 1000, 0),
    usecPerResponse: responses ? round(totalUsec / responses, 1) : null,
    top: rows
      .filter((row) => row.calls > 0)
      .sort((a, b) => b.usec - a.usec)
      .slice(0, 6)
      .map((row) => ({
        command: row.command,
        percent: totalUsec ? round((row.usec / totalUsec) * 100, 0) : 0,
        callsPerResponse: responses ? round(row.calls / responses, 2) : null,
      })),
  };
}

function formatRedis(redis) {
  const top = redis.top.map((row) => `${row.command} ${row.percent}% (${row.callsPerResponse}/resp)`).join(', ');
  return `${redis.usecPerResponse} µs of command time per response; ${top}`;
}

function formatCpu(cpu) {
  return Object.entries(cpu)
    .map(([name, value]) => `${name} ${value}%`)
    .join(', ');
}

function pickAudit(audit) {
  const { ok, oversold, duplicateOrders, lostReservations, stock, remaining, held, ordersByStatus } = audit;
  return { ok, oversold, duplicateOrders, lostReservations, stock, remaining, held, ordersByStatus };
}

// ---------------------------------------------------------------------------------------------
// CPU profile of the API (BENCH_CPU_PROF=1)

/**
 * `--cpu-prof` writes only on a normal exit, and the API re-raises SIGTERM after its shutdown hooks,
 * so it would never write; and Nest's shutdown hooks also stop the app on SIGUSR2. Instead a preload
 * module (generated into TMP; no app code changes) runs the V8 profiler between two messages on an
 * IPC channel, which lets us profile exactly the measured window.
 */
function writeProfilerPreload() {
  const file = path.join(TMP, 'cpu-profile-preload.cjs');
  writeFileSync(
    file,
    `const inspector = require('node:inspector');
const fs = require('node:fs');
const session = new inspector.Session();
session.connect();
process.channel?.unref(); // the channel must not keep the API alive
process.on('message', (message) => {
  if (message === 'cpu-profile:start') {
    session.post('Profiler.enable', () => session.post('Profiler.start', () => process.send('cpu-profile:started')));
  } else if (message === 'cpu-profile:stop') {
    session.post('Profiler.stop', (error, result) => {
      fs.writeFileSync(process.env.BENCH_CPU_PROFILE_PATH, JSON.stringify(error ? { error: String(error) } : result.profile));
      process.send('cpu-profile:written');
    });
  }
});
`,
  );
  return file;
}

/** Sends a command to the profiler preload and waits for its answer. */
function profilerCommand(child, command, answer) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${answer} from the API profiler`)), 30_000);
    const onMessage = (message) => {
      if (message !== answer) return;
      clearTimeout(timer);
      child.off('message', onMessage);
      resolve();
    };
    child.on('message', onMessage);
    child.send(command);
  });
}

async function readProfile(file) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  if (profile.error) throw new Error(`CPU profile failed: ${profile.error}`);
  // Outside TMP (deleted at the end) and outside bench/results (not something to commit).
  const kept = path.join(os.tmpdir(), `flash-sale-bench-${RUN_ID}-api-live.cpuprofile`);
  writeFileSync(kept, JSON.stringify(profile));
  const analysis = analyzeProfile(profile);
  analysis.file = kept;
  log(`API CPU profile written to ${analysis.file} (open it in Chrome DevTools)`);
  return analysis;
}

/** Top frames by self time, and the share of samples in which each package is on the stack. */
function analyzeProfile(profile) {
  const frameName = ({ functionName, url, lineNumber }) => {
    const file = url.replace(/^file:\/\//, '').replace(`${ROOT}/`, '');
    return `${functionName || '(anonymous)'}${file ? ` ${file}:${lineNumber + 1}` : ''}`;
  };
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parentOf = new Map();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);

  const packageOf = (url, functionName) => {
    if (!url) return functionName.startsWith('(') ? functionName : '(native)';
    const match = url.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/);
    if (match) return match[1];
    if (url.startsWith('node:')) return 'node (core)';
    if (/\/(apps|libs)\//.test(url)) return 'app (apps/, libs/)';
    return url;
  };
  const stackPackages = new Map();
  const packagesOnStack = (id) => {
    let set = stackPackages.get(id);
    if (set) return set;
    const node = nodes.get(id);
    const parent = parentOf.get(id);
    set = new Set(parent === undefined ? [] : packagesOnStack(parent));
    set.add(packageOf(node.callFrame.url, node.callFrame.functionName));
    stackPackages.set(id, set);
    return set;
  };

  const selfByFrame = new Map();
  const inclusiveByPackage = new Map();
  let total = 0;
  let idle = 0;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    const { callFrame } = nodes.get(id);
    if (callFrame.functionName === '(idle)') {
      idle += delta;
      return;
    }
    total += delta;
    let key = frameName(callFrame);
    // A native frame (no URL, e.g. OpenSSL's `init`) says little alone: name its JavaScript caller.
    if (!callFrame.url && !callFrame.functionName.startsWith('(') && parentOf.has(id)) {
      key = `${key} (native) ← ${frameName(nodes.get(parentOf.get(id)).callFrame)}`;
    }
    selfByFrame.set(key, (selfByFrame.get(key) ?? 0) + delta);
    for (const pkg of packagesOnStack(id)) inclusiveByPackage.set(pkg, (inclusiveByPackage.get(pkg) ?? 0) + delta);
  });
  const share = (value) => round((value / total) * 100, 1);
  // Nearly every sample has Node's own frames (microtask queue, timers) at its root: not informative.
  const uninformative = new Set(['(root)', '(native)', 'node (core)']);
  const top = (map, n) =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([name, us]) => ({ name, percent: share(us), ms: round(us / 1000, 0) }));
  return {
    busyMs: round(total / 1000, 0),
    idleMs: round(idle / 1000, 0),
    topSelf: top(selfByFrame, 15),
    packagesInclusive: top(inclusiveByPackage, 18).filter((row) => !uninformative.has(row.name)),
  };
}

// ---------------------------------------------------------------------------------------------
// Report

function machineInfo() {
  const cpus = os.cpus();
  return {
    cpuModel: cpus[0]?.model ?? 'unknown',
    cpuCount: cpus.length,
    totalMemoryGiB: round(os.totalmem() / 2 ** 30, 1),
    node: process.version,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    loadAverageAtStart: os.loadavg().map((value) => round(value, 2)),
  };
}

/** What was measured: HEAD, and when dist was last built (another commit may sit in src, unbuilt). */
function appInfo() {
  const git = (...args) => spawnSync('git', args, { cwd: ROOT, encoding: 'utf8' }).stdout?.trim() ?? '';
  const dirty = git('status', '--porcelain', '--', 'apps', 'libs');
  let newest = 0;
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.js')) newest = Math.max(newest, statSync(full).mtimeMs);
    }
  };
  for (const base of ['apps', 'libs']) {
    for (const project of readdirSync(path.join(ROOT, base))) {
      const dist = path.join(ROOT, base, project, 'dist');
      if (existsSync(dist)) walk(dist);
    }
  }
  return {
    commit: git('rev-parse', '--short', 'HEAD'),
    commitSubject: git('log', '-1', '--format=%s'),
    uncommittedAppFiles: dirty ? dirty.split('\n').length : 0,
    distBuiltAt: newest ? new Date(newest).toISOString() : null,
  };
}

function renderMarkdown(r) {
  const m = r.machine;
  const lines = [
    `# Purchase benchmark — ${r.finishedAt}`,
    '',
    `Machine: ${m.cpuModel} × ${m.cpuCount}, ${m.totalMemoryGiB} GiB RAM, Node ${m.node}, ${m.platform}; ` +
      `load average at start ${m.loadAverageAtStart.join(' / ')}. App commit ${r.app.commit}` +
      (r.app.uncommittedAppFiles ? ` + ${r.app.uncommittedAppFiles} uncommitted files under apps/ libs/` : '') +
      ` ("${r.app.commitSubject}"), dist built ${r.app.distBuiltAt}.`,
    `Load generator, API, worker, Redis and MariaDB all on this machine. ${r.settings.connections} connections, ` +
      `${r.settings.durationS} s per scenario after a ${r.settings.warmupS} s warm-up; each request a distinct ` +
      `(user, submit token) pair.`,
    '',
    '| scenario | connections | req/s | p50 (ms) | p95 (ms) | p99 (ms) | errors |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...r.scenarios.map(
      (s) =>
        `| ${s.scenario} | ${s.connections} | ${s.reqPerSec} | ${s.latencyMs.p50} | ${s.latencyMs.p95} | ` +
        `${s.latencyMs.p99} | ${s.errors}${s.timeouts ? ` (+${s.timeouts} timeouts)` : ''} |`,
    ),
    '',
    `errors = responses other than the expected status (202, or 410 for the sold-out sale) + socket errors. ` +
      `"purchase, worker stopped" is the ${r.settings.drainOrders} purchases that fill the drain queue ` +
      `(a fixed count, not a duration).`,
    '',
    '**CPU during each scenario** (per process: % of one core; machine busy and steal: % of all cores)',
    '',
    ...r.scenarios.map((s) => `- ${s.scenario}: ${formatCpu(s.cpu)}`),
    `- drain: ${formatCpu(r.drain.cpu)}`,
    '',
    '**Redis command time per scenario** (server-wide `INFO commandstats` deltas; EVALSHA covers both the',
    "reservation script and BullMQ's scripts, including the worker's)",
    '',
    ...r.scenarios.map((s) => `- ${s.scenario}: ${formatRedis(s.redisCommands)}`),
    '',
    `**Drain rate**: ${r.drain.rows} orders written at **${r.drain.ordersPerSec} orders/s** ` +
      `(first → last order row ${r.drain.firstToLastS} s, polled every ${r.drain.pollIntervalMs} ms; ` +
      `by the rows' created_at ${r.drain.ordersPerSecByRowTimestamps} orders/s; worker start → first row ` +
      `${r.drain.workerBootToFirstRowS} s). MySQL transactions ≈ ${r.drain.mysqlTransactions.commits} commits ` +
      `(+${r.drain.mysqlTransactions.rollbacks} rollbacks, server-wide counters) ≈ ${r.drain.ordersPerTransaction} ` +
      `orders per transaction. Audit: ok = **${r.drain.audit.ok}** (oversold ${r.drain.audit.oversold}, ` +
      `duplicates ${r.drain.audit.duplicateOrders}, lost ${r.drain.audit.lostReservations}).`,
    '',
    `Live sale: queue right after the run ${JSON.stringify(r.scenarios[0].queueBacklogAtEnd)}; its backlog was ` +
      `written ${r.liveBacklogDrainS} s after the sold-out run. Audits: live ok = ${r.audits.live.ok}, ` +
      `sold-out ok = ${r.audits.soldOut.ok}.`,
    '',
    `Checks: ${r.checks.map((c) => `${c.pass ? 'PASS' : 'FAIL'} ${c.name}`).join('; ')}.`,
  ];
  if (r.apiProfile) {
    const p = r.apiProfile;
    lines.push(
      '',
      `**API CPU profile, live scenario** (${p.busyMs} ms busy, ${p.idleMs} ms idle; ${p.file})`,
      '',
      '| top self time | % |',
      '|---|---:|',
      ...p.topSelf.map((row) => `| \`${row.name}\` | ${row.percent} |`),
      '',
      '| on the stack (inclusive) | % |',
      '|---|---:|',
      ...p.packagesInclusive.map((row) => `| ${row.name} | ${row.percent} |`),
    );
  }
  return `${lines.join('\n')}\n`;
}

function round(value, digits = 1) {
  if (value === null || value === undefined || !Number.isFinite(value)) return null;
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

// ---------------------------------------------------------------------------------------------
// Cleanup: idempotent, runs on success, failure and signals

function cleanup() {
  state.cleaning ??= (async () => {
    state.loadRun?.stop();
    // Let an in-flight pipeline of submit tokens land before the scan, so none is missed.
    await sleep(200);
    await Promise.all([...state.children].map((child) => stopChild(child, 5_000).catch(() => {})));
    try {
      await state.queue?.close();
    } catch {
      // the keys go below anyway
    }
    if (state.redis) {
      try {
        let deleted = 0;
        for (const pattern of [`${REDIS_KEY_PREFIX}:*`, `${QUEUE_PREFIX}:*`]) {
          let cursor = '0';
          do {
            const [nextCursor, found] = await state.redis.scan(cursor, 'MATCH', pattern, 'COUNT', 5000);
            cursor = nextCursor;
            if (found.length) deleted += await state.redis.unlink(...found);
          } while (cursor !== '0');
        }
        log(`deleted ${deleted} Redis keys`);
      } catch (error) {
        console.error(
          `[bench] could not delete Redis keys ${REDIS_KEY_PREFIX}:* / ${QUEUE_PREFIX}:*: ${error.message}`,
        );
      }
      state.redis.disconnect();
    }
    if (state.mysql) {
      try {
        if (state.databaseCreated) await state.mysql.query(`DROP DATABASE IF EXISTS \`${DB_NAME}\``);
        log(`dropped database ${DB_NAME}`);
      } catch (error) {
        console.error(`[bench] could not drop database ${DB_NAME}: ${error.message}`);
      }
      await state.mysql.end().catch(() => {});
    }
    // Child logs (and the profiler preload) live in TMP: kept when something went wrong.
    if (state.keepLogs) log(`logs kept in ${TMP}`);
    else rmSync(TMP, { recursive: true, force: true });
  })();
  return state.cleaning;
}
