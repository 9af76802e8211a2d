#!/usr/bin/env node
/**
 * `npm start`: from a fresh clone to a running app with one command. Needs only Node (it runs before
 * `npm install`, so it uses nothing but built-ins).
 *
 *   1. install dependencies if needed, 2. build (the storefront when its sources changed), 3. find or start Redis and MySQL
 *   (scripts/lib/services.mjs), 4. migrate, 5. start the API (which serves the built storefront) and
 *   the worker, 6. seed a demo sale, 7. print where everything is — the last thing it prints.
 *
 * The terminal stays calm (scripts/lib/terminal.mjs): a progress line per step, and of the apps' logs
 * only warnings and errors; everything is kept in full under .data/logs/. LOG_FORMAT=json passes the
 * apps' JSON lines through instead, for machines.
 *
 * `npm run start:load` (`--load-test`) is `npm start` with RATE_LIMIT_PROFILE=load-test: k6 and the bench
 * sign every buyer in from one address, which the standard per-IP sign-in limit refuses after 20 a
 * minute (docs/protection.md). Only those per-IP limits are lifted; the per-user ones stay.
 *
 * `npm run dev` (`--dev`) is the same, except that the storefront is served by Vite's dev server (hot
 * reload) on WEB_PORT (5173), which proxies the API's paths to the API.
 *
 * Many processes: API_INSTANCES API processes (default half the cores) share the one port — with more
 * than one, the API runs under its cluster entry (apps/api/dist/cluster.js, node:cluster), which forks
 * them and forks again one that dies; with one, the API runs alone as it would in a container. And
 * WORKER_INSTANCES worker processes (default 1), the i-th with its metrics on WORKER_METRICS_PORT + i.
 *
 * Ctrl-C, or SIGINT, SIGTERM or SIGHUP sent to this process alone (as a process manager does), stops
 * everything it started, a setup step midway included. `npm start` runs it with `exec`, so npm's own
 * pid is this script's parent and the signals npm forwards (SIGINT, SIGTERM) arrive here, not at a shell
 * that would sit on them; if npm itself dies (SIGHUP and SIGKILL end npm without a word to its child),
 * this script, left without the process that started it, stops everything too. If the API (its
 * cluster's primary) or a worker dies, it is restarted with a growing backoff (logged); a private Redis
 * or MySQL that dies still stops everything, non-zero.
 *
 * Environment: PORT (3000; another free port if 3000 is taken and PORT is unset), WORKER_METRICS_PORT
 * (9464, moved the same way), API_INSTANCES, WORKER_INSTANCES, ADMIN_PASSWORD, REDIS_URL, DATABASE_URL,
 * LOG_FORMAT (pretty | json),
 * RATE_LIMIT_PROFILE, and FLASH_SALE_PRIVATE_SERVICES=1 to ignore existing servers and run private
 * ones under .data/.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { clearInterval, setInterval } from 'node:timers';
import { fileURLToPath } from 'node:url';
import { installDependencies } from './lib/dependencies.mjs';
import { seedDemoSale } from './lib/demo-sale.mjs';
import { freePort, portIsFree } from './lib/ports.mjs';
import { answeringPid, httpAnswers } from './lib/probes.mjs';
import { killOnExit, terminate, waitUntil } from './lib/processes.mjs';
import { ServicesUnavailableError, ensureServices } from './lib/services.mjs';
import { recordStorefrontBuild, storefrontBuildState } from './lib/storefront-build.mjs';
import { createTerminal } from './lib/terminal.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** The app's own built packages, resolved as the apps resolve them. */
const requireBuilt = createRequire(path.join(ROOT, 'package.json'));
const WEB_PORT = Number(process.env.WEB_PORT || 5173);
const DEV = process.argv.includes('--dev');
const LOAD_TEST = process.argv.includes('--load-test');
const ADMIN_PASSWORD = process.env.ADMIN_PASSWORD || 'admin'; // the API's development default
const RATE_LIMIT_PROFILE = LOAD_TEST ? 'load-test' : process.env.RATE_LIMIT_PROFILE || 'standard'; // the API's default: standard
const terminal = createTerminal({
  format: process.env.LOG_FORMAT === 'json' ? 'json' : 'pretty',
  logDir: path.join(ROOT, '.data', 'logs'),
});
const log = terminal.say;
/**
 * How many processes of each app run: the API's share one port. The API's default is the app's own
 * (libs/config `defaultApiInstances`, read once it is built): half the cores, as the bench measured.
 */
const instances = {
  api: 0,
  worker: instanceCount('WORKER_INSTANCES', 1),
};
/** The ports in use, chosen in main(): the defaults unless taken (see appPort); one per worker process. */
const ports = { api: 0, workerMetrics: [] };

/** Everything that has to be stopped on the way out, newest last. */
const running = { apps: [], services: null };
let stopping = null;
/** How often the parent process is checked for (see stopWhenOrphaned). */
const PARENT_CHECK_MS = 1_000;

main().catch(async (error) => {
  if (stopping) return; // a step ended by the stop: no news, and the stop exits
  if (error instanceof ServicesUnavailableError) console.error(`\n${error.message}\n`);
  else terminal.error(error instanceof StepFailed ? error.message : (error.stack ?? String(error)));
  await stopAll();
  process.exit(1);
});

async function main() {
  process.chdir(ROOT);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => onSignal(signal));
  stopWhenOrphaned();

  await installDependencies(ROOT, { log, runStep, npm: npm() });
  await build();
  instances.api = instanceCount('API_INSTANCES', requireBuilt('@flash-sale/config').defaultApiInstances());
  if (stopping) return;

  running.services = await ensureServices({
    dataDir: path.join(ROOT, '.data'),
    log,
    onUnexpectedExit: (name, code, signal) => fail(`private ${name} exited (${code ?? signal}); see .data/${name}.log`),
  });
  ports.api = await appPort('PORT', 3000, 'the API');
  ports.workerMetrics = await workerMetricsPorts();
  const env = {
    ...process.env,
    DATABASE_URL: running.services.databaseUrl,
    PORT: String(ports.api),
    API_INSTANCES: String(instances.api),
  };
  if (LOAD_TEST) env.RATE_LIMIT_PROFILE = 'load-test';
  if (running.services.redisUrl) env.REDIS_URL = running.services.redisUrl;

  await migrate(env);
  if (stopping) return;
  // One API process runs alone; more share the port under the cluster entry, which restarts its own.
  const apiEntry = instances.api === 1 ? 'apps/api/dist/main.js' : 'apps/api/dist/cluster.js';
  startApp('api', [process.execPath, apiEntry], env);
  ports.workerMetrics.forEach((metricsPort, i) =>
    startApp(workerName(i), [process.execPath, 'apps/worker/dist/main.js'], {
      ...env,
      WORKER_METRICS_PORT: String(metricsPort),
    }),
  );
  if (DEV)
    startApp('web', [npm(), 'run', '--silent', 'dev', '-w', '@flash-sale/web'], { ...env, WEB_PORT: String(WEB_PORT) });

  const apiUrl = `http://127.0.0.1:${ports.api}/api`;
  if (!(await waitForApi(apiUrl))) return fail(`the API did not answer on ${apiUrl}/sales within 60s`);
  await waitForEveryApiProcess(`http://127.0.0.1:${ports.api}/health`, instances.api);
  await seedDemoSale(apiUrl, ADMIN_PASSWORD, log).catch((error) =>
    log(`could not seed the demo sale (the app runs anyway): ${error.message}`),
  );
  if (!stopping) printSummary();
}

// ---------------------------------------------------------------------------------------------
// 1-2. Dependencies and build

/**
 * `tsc -b` is incremental: a no-change build takes about a second. Run directly, not via npx, to skip
 * npm's startup. The storefront is built by Vite (a few seconds) only when what it is built from changed
 * since its last build (scripts/lib/storefront-build.mjs), and not at all when Vite's dev server serves it.
 */
async function build() {
  const tsc = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  await runStep('building the API and the worker (tsc -b)', 'build', process.execPath, [tsc, '-b', 'tsconfig.json']);
  if (DEV) return;
  const storefront = storefrontBuildState(ROOT);
  if (storefront.upToDate) return log(`storefront: ${storefront.reason}, not rebuilt`);
  await runStep(`building the storefront (vite build: ${storefront.reason})`, 'build', npm(), [
    'run',
    '--silent',
    'build',
    '-w',
    '@flash-sale/web',
  ]);
  recordStorefrontBuild(ROOT, storefront.digest);
}

function npm() {
  return process.platform === 'win32' ? 'npm.cmd' : 'npm';
}

/** A step's failure, already explained on the terminal (its output's tail): no stack trace needed. */
class StepFailed extends Error {}

async function runStep(...args) {
  if (stopping) throw new StepFailed('stopping');
  try {
    await terminal.step(...args);
  } catch (error) {
    throw new StepFailed(error.message);
  }
}

/**
 * The port an app listens on: the variable's value when set (a clash is then the app's error to
 * report), else the default if it is free, else any free port — a second checkout, another service
 * or a private test stack may hold the default, and that must not stop this one.
 */
async function appPort(variable, defaultPort, what) {
  if (process.env[variable]) return Number(process.env[variable]);
  if (await portIsFree(defaultPort)) return defaultPort;
  const port = await freePort();
  log(`port ${defaultPort} is taken: ${what} listens on ${port} instead (set ${variable} to choose)`);
  return port;
}

/** API_INSTANCES / WORKER_INSTANCES: a whole number from 1 to 256, else the default. */
function instanceCount(variable, defaultCount) {
  const raw = process.env[variable];
  if (raw === undefined || raw === '') return defaultCount;
  const count = Number(raw);
  if (!Number.isInteger(count) || count < 1 || count > 256) {
    console.error(`${variable} must be an integer between 1 and 256, got "${raw}"`);
    process.exit(1);
  }
  return count;
}

/** `worker`, `worker-2`, `worker-3`…: the name in the terminal and of the log file under .data/logs. */
function workerName(i) {
  return i === 0 ? 'worker' : `worker-${i + 1}`;
}

/**
 * Each worker process's metrics port: WORKER_METRICS_PORT (or 9464, moved if taken) for the first,
 * that + i for the i-th — each process binds its own. 0 turns them all off.
 */
async function workerMetricsPorts() {
  const first = await appPort('WORKER_METRICS_PORT', 9464, 'the worker’s metrics');
  const chosen = [first];
  for (let i = 1; i < instances.worker; i++) {
    if (first === 0) chosen.push(0);
    else if (process.env.WORKER_METRICS_PORT || (await portIsFree(first + i))) chosen.push(first + i);
    else chosen.push(await freePort());
  }
  return chosen;
}

// ---------------------------------------------------------------------------------------------
// 4-5. Migrations, API and worker

async function migrate(env) {
  await runStep('applying migrations', 'migrate', process.execPath, ['libs/db/dist/migrate.js'], { env });
}

/** Restart backoff of a crashed app: 0.5 s, doubling to at most 10 s; reset after 30 s of uptime. */
const RESTART_BACKOFF_MS = { first: 500, max: 10_000, stableAfter: 30_000 };

/**
 * Starts one app with its output going through the terminal (terminal.followApp), and supervises it: if it exits while we are not stopping
 * (a crash, an OOM kill, a `kill -9`), it is started again after a backoff that grows while it keeps
 * crashing, and each restart is logged. It runs in its own process group so the terminal's Ctrl-C
 * reaches only this script, which then stops the apps before the databases they use.
 */
function startApp(name, [command, ...args], env) {
  const app = { name, child: null, exited: Promise.resolve(), restarts: 0 };
  running.apps.push(app);
  let backoffMs = RESTART_BACKOFF_MS.first;
  const launch = () => {
    if (stopping) return;
    const startedAt = Date.now();
    const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    terminal.followApp(name, child);
    killOnExit.add(child);
    app.child = child;
    app.exited = exited;
    exited.then(({ code, signal }) => {
      killOnExit.delete(child);
      if (stopping) return;
      if (Date.now() - startedAt >= RESTART_BACKOFF_MS.stableAfter) backoffMs = RESTART_BACKOFF_MS.first;
      app.restarts++;
      terminal.error(
        `${name} exited unexpectedly (${code ?? signal}); restarting in ${backoffMs} ms (restart #${app.restarts}); its log: ${terminal.shortLog(name)}`,
      );
      setTimeout(launch, backoffMs);
      backoffMs = Math.min(backoffMs * 2, RESTART_BACKOFF_MS.max);
    });
  };
  launch();
}

// ---------------------------------------------------------------------------------------------
// 6-7. Demo data and summary

async function waitForApi(apiUrl) {
  const ready = await waitUntil(async () => stopping || (await httpAnswers(`${apiUrl}/sales`)), 60_000, 500);
  return ready && !stopping;
}

/**
 * With several API processes, the first to answer is not the last to start: until each has listened, its
 * start-up lines are still to come, and would land under the banner. Waits until `count` different
 * processes have answered (at most 60 s; a process that cannot start says so in its own log).
 */
async function waitForEveryApiProcess(healthUrl, count) {
  if (count <= 1) return;
  const answered = new Set();
  await waitUntil(
    async () => {
      if (stopping) return true;
      const pid = await answeringPid(healthUrl);
      if (pid !== undefined) answered.add(pid);
      return answered.size >= count;
    },
    60_000,
    100,
  );
}

/** The banner: the last thing a start prints, so the URLs and the password stay on screen. */
function printSummary() {
  const base = `http://localhost:${ports.api}`;
  const shop = DEV ? `http://localhost:${WEB_PORT}` : base;
  const password = process.env.ADMIN_PASSWORD
    ? '(the ADMIN_PASSWORD you set)'
    : 'admin   (development default; set ADMIN_PASSWORD)';
  const workerMetrics =
    ports.workerMetrics[0] === 0
      ? 'off (worker)'
      : ports.workerMetrics.map((port) => `http://127.0.0.1:${port}/metrics`).join(', ') +
        (instances.worker === 1 ? ' (worker)' : ' (workers)');
  const workerLogs = ports.workerMetrics.map((_, i) => terminal.shortLog(workerName(i))).join(', ');
  const logs =
    terminal.format === 'json'
      ? 'JSON lines above (LOG_FORMAT=json)'
      : `${terminal.shortLog('api')}, ${workerLogs}  (warnings and errors also show here)`;
  const apiProcesses =
    instances.api === 1 ? '1 API process' : `${instances.api} API processes on port ${ports.api} (node:cluster)`;
  const workerProcesses = instances.worker === 1 ? '1 worker' : `${instances.worker} workers`;
  terminal.banner(
    [
      '',
      '  Flash sale is running.',
      `    Storefront       ${shop}${DEV ? '  (Vite dev server, hot reload)' : ''}`,
      `    Admin console    ${shop}/admin`,
      `    Admin password   ${password}`,
      `    Oversell demo    ${shop}/admin/demo`,
      `    API docs         ${base}/docs   (the contract: docs/api.md)`,
      `    Processes        ${apiProcesses}, ${workerProcesses}   (API_INSTANCES, WORKER_INSTANCES)`,
      ...(process.env.API_INSTANCES
        ? []
        : [
            `                     API processes: half of ${availableParallelism()} cores, the fastest the bench measured ` +
              '(docs/performance.md, "How many API processes")',
          ]),
      `    Metrics          ${base}/metrics (API${instances.api === 1 ? '' : ', all its processes summed'}), ${workerMetrics}`,
      `    Queue board      ${base}/admin/queues   (admins only)`,
      `    Rate limits      ${RATE_LIMIT_PROFILE === 'load-test' ? 'load-test profile (per-IP sign-in limits lifted for k6)' : 'standard (for k6: npm run start:load)'}`,
      `    Redis            ${running.services.redisUrl ?? '(cluster: REDIS_CLUSTER_NODES)'}`,
      `    MySQL            ${running.services.databaseUrl.replace(/:[^:@/]*@/, ':***@')}`,
      `    Logs             ${logs}`,
      '  Press Ctrl-C to stop.',
      '',
      '',
    ].join('\n'),
  );
}

// ---------------------------------------------------------------------------------------------
// Stopping

function onSignal(signal) {
  if (stopping) return; // npm forwards the terminal's Ctrl-C too: a second copy is expected, not urgent
  log(`${signal}: stopping`);
  stopAll().then(() => process.exit(0));
}

/**
 * Stops everything once the process that started this one is gone — npm under `npm start`, killed by
 * a SIGHUP or SIGKILL that npm neither survives nor forwards. Left running, this script and its apps
 * would hold the ports with nobody to stop them. An orphan is adopted by another process, so its
 * parent pid changes: checked every PARENT_CHECK_MS.
 */
function stopWhenOrphaned() {
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    onSignal(`the process that started npm start (pid ${parent}) is gone`);
  }, PARENT_CHECK_MS);
  timer.unref();
}

/** Something we depend on died: stop the rest and exit non-zero. */
function fail(reason) {
  if (stopping) return;
  terminal.error(`${reason}; stopping everything`);
  stopAll().then(() => process.exit(1));
}

/** A setup step midway, then the apps (they drain jobs and close connections), then the private servers they were using. */
function stopAll() {
  stopping ??= (async () => {
    await terminal.stopSteps(10_000);
    // Read each app's current child: a supervised app may have been restarted since it was started.
    await Promise.all(running.apps.map((app) => app.child && terminate(app.child, app.exited, 10_000)));
    await running.services?.stop();
    log('stopped');
  })();
  return stopping;
}
