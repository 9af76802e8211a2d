#!/usr/bin/env node
/**
 * `npm run rehearsal` (as root): the compose deployment rehearsed as machines on a real network
 * (docs/operations.md, "Running on several machines"). Each machine is a network namespace with its own
 * address (scripts/lib/machines.mjs), running the built app and the real servers:
 *
 *   lb                    HAProxy with deploy/haproxy.cfg, its replicas named by address instead of Docker's DNS
 *   api-1, api-2          one API process each (apps/api/dist/main.js)
 *   worker-1, worker-2    one worker each
 *   redis-1..3            a Redis Cluster of 3 masters and 3 replicas, two nodes a machine, no master on
 *                         the machine of its own replica (the compose profile's node settings)
 *   mysql-1, mysql-2      a MariaDB primary and its replica (binlog replication)
 *
 * It sells a burst of buyers through the balancer, waits for every order to be written, audits the sale,
 * checks that the replica holds every order row, prints where each machine is, and tears everything down
 * (also on Ctrl-C and on failure). With `--hold` it stays up after the burst, for k6 or a browser on
 * this host, until Ctrl-C. Exit: 0 the audit passed, 1 it failed, 2 machines cannot be made here.
 */
import { execFile } from 'node:child_process';
import { connect } from 'node:net';
import { performance } from 'node:perf_hooks';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createConnection } from 'mysql2/promise';
import { parseCommandLine } from './lib/cli.mjs';
import { renderBalancerConfig } from './lib/balancer-config.mjs';
import { createMachines, machinesAvailable } from './lib/machines.mjs';
import { httpAnswers } from './lib/probes.mjs';
import { findExecutable, killOnExit, tail, waitUntil } from './lib/processes.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const run = promisify(execFile);
const ADMIN_PASSWORD = 'admin';
const METRICS_TOKEN = 'rehearsal-only-metrics-token';
const API_PORT = 3000;
const REDIS_PORTS = { master: 6379, replica: 6380 };
const API_MACHINES = ['api-1', 'api-2'];
const WORKER_MACHINES = ['worker-1', 'worker-2'];
const REDIS_MACHINES = ['redis-1', 'redis-2', 'redis-3'];
const MACHINES = ['lb', ...API_MACHINES, ...WORKER_MACHINES, ...REDIS_MACHINES, 'mysql-1', 'mysql-2'];

const USAGE = `Usage: npm run rehearsal -- [options]   (as root; docs/operations.md, "Running on several machines")
  --buyers N     buyers in the burst (default 600), each buying one unit once
  --stock N      units of the rehearsal's sale (default 200): more buyers than units, so some hear 410
  --hold         stay up after the audit, for k6 or a browser on this host, until Ctrl-C
  --keep-logs    keep the machines' logs (they are kept anyway when something fails)
  --help         this text`;

const log = (line) => console.log(`[rehearsal] ${line}`);

async function main() {
  const { values } = parseCommandLine({
    name: 'rehearsal',
    usage: USAGE,
    options: {
      buyers: { type: 'string', default: '600' },
      stock: { type: 'string', default: '200' },
      hold: { type: 'boolean', default: false },
      'keep-logs': { type: 'boolean', default: false },
    },
  });
  const buyers = positiveInteger(values.buyers, '--buyers');
  const stock = positiveInteger(values.stock, '--stock');
  const available = machinesAvailable();
  if (!available.ok) {
    console.error(`[rehearsal] machines cannot be made here: ${available.why}`);
    return 2;
  }
  const binaries = requiredBinaries();
  ensureBuilt();

  const dir = mkdtempSync(path.join(tmpdir(), 'flash-sale-rehearsal-'));
  const deployment = { dir, network: undefined, keepLogs: values['keep-logs'] };
  onInterrupt(deployment);
  let passed = false;
  try {
    const network = await createMachines(MACHINES);
    deployment.network = network;
    const address = (name) => network.machines[name].address;
    log(
      `${MACHINES.length} machines (network ${network.id}) on ${network.subnet}, this host ${network.hostAddress}; logs in ${dir}`,
    );

    const mysql = await startMysql(network, binaries, dir);
    const redisNodes = await startRedisCluster(network, binaries, dir);
    const appEnv = {
      PATH: process.env.PATH,
      NODE_ENV: 'development',
      DATABASE_URL: `mysql://root@${address('mysql-1')}:3306/flash_sale`,
      REDIS_CLUSTER_NODES: redisNodes.join(','),
      JWT_SECRET: 'rehearsal-only-jwt-secret',
      ADMIN_PASSWORD,
      PAYMENT_WEBHOOK_SECRET: 'rehearsal-only-payment-webhook-secret',
      METRICS_TOKEN,
      // One client address (this host's, forwarded by the balancer) speaks for every buyer of the burst.
      RATE_LIMIT_PROFILE: 'load-test',
      TRUST_PROXY: address('lb'),
      HOST: '0.0.0.0',
      PORT: String(API_PORT),
    };
    await migrate(appEnv, dir);
    startApps(network, appEnv, dir);
    await startBalancer(network, binaries, dir);
    const baseUrl = `http://${address('lb')}:${API_PORT}`;
    await waitForReady(network, baseUrl, dir);

    // Counted before and after: each API's startup warm-up buys on a sale of its own.
    const purchasesBefore = await purchasesByApi(network);
    const burst = await sellBurst(baseUrl, { buyers, stock });
    const purchasesAfter = await purchasesByApi(network);
    burst.byApi = Object.fromEntries(
      API_MACHINES.map((machine) => [machine, purchasesAfter[machine] - purchasesBefore[machine]]),
    );
    burst.balancer = await balancerView(dir);
    // How leastconn shares a burst of short requests varies from run to run: said, not judged.
    log(`purchases answered by each API machine: ${JSON.stringify(burst.byApi)}`);
    log(`the balancer's view: ${JSON.stringify(burst.balancer)}`);
    const audit = await awaitWrittenAndAudit(baseUrl, burst);
    const replicated = await awaitReplica(mysql, burst.saleId, audit.rowsOnPrimary);
    printMachines(network, baseUrl);
    passed = report(burst, audit, replicated, stock);
    if (values.hold) {
      printHowToLoad(baseUrl);
      await new Promise(() => undefined); // until Ctrl-C (onInterrupt tears down)
    }
  } finally {
    await tearDown(deployment, passed);
  }
  return passed ? 0 : 1;
}

function positiveInteger(text, flag) {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) {
    console.error(`[rehearsal] ${flag} takes a positive integer, got "${text}"`);
    process.exit(2);
  }
  return value;
}

function requiredBinaries() {
  const found = {
    haproxy: findExecutable(['haproxy']),
    redisServer: findExecutable(['redis-server']),
    redisCli: findExecutable(['redis-cli']),
    mariadbd: findExecutable(['mariadbd']),
    installDb: findExecutable(['mariadb-install-db']),
  };
  const missing = Object.entries(found)
    .filter(([, binary]) => !binary)
    .map(([name]) => name);
  if (missing.length > 0) {
    console.error(
      `[rehearsal] missing: ${missing.join(', ')} (Debian: apt-get install haproxy redis-server mariadb-server)`,
    );
    process.exit(2);
  }
  return found;
}

/** The rehearsal runs the built app, as a deployment does. */
function ensureBuilt() {
  const entries = ['apps/api/dist/main.js', 'apps/worker/dist/main.js', 'libs/db/dist/migrate.js'];
  if (entries.every((entry) => existsSync(path.join(ROOT, entry)))) return;
  console.error('[rehearsal] the app is not built: run `npx tsc -b tsconfig.json` first');
  process.exit(2);
}

/** MariaDB on mysql-1 (binlog on) and its replica on mysql-2, which copies everything from the start. */
async function startMysql(network, binaries, dir) {
  const servers = ['mysql-1', 'mysql-2'].map((machine, index) => {
    const dataDir = path.join(dir, machine);
    return { machine, dataDir, socket: path.join(dataDir, 'mysql.sock'), serverId: index + 1 };
  });
  // One after the other, each in a temporary folder of its own: two bootstraps at once in one /tmp
  // have been seen to trip over each other's temporary tables.
  for (const { dataDir } of servers) {
    mkdirSync(path.join(dataDir, 'tmp'), { recursive: true });
    await run(binaries.installDb, [
      '--no-defaults',
      `--datadir=${path.join(dataDir, 'data')}`,
      `--tmpdir=${path.join(dataDir, 'tmp')}`,
      '--auth-root-authentication-method=normal',
      '--skip-test-db',
      '--user=root',
    ]);
  }
  for (const server of servers) {
    const { machine, dataDir, socket, serverId } = server;
    // prettier-ignore
    const args = ['--no-defaults', `--datadir=${path.join(dataDir, 'data')}`, '--port=3306',
      `--bind-address=${network.machines[machine].address}`, `--socket=${socket}`,
      `--pid-file=${path.join(dataDir, 'mysql.pid')}`, `--tmpdir=${path.join(dataDir, 'tmp')}`, '--user=root',
      `--server-id=${serverId}`,
      '--log-bin=mysql-bin', '--binlog-format=ROW', '--max-connections=1000',
      // No DNS on these machines: a reverse lookup of each client would stall its greeting.
      '--skip-name-resolve',
      ...(serverId === 1 ? [] : ['--read-only=ON'])];
    const { exited } = network.spawn(machine, binaries.mariadbd, args, { logFile: path.join(dir, `${machine}.log`) });
    // Over its socket: only root@localhost exists until the primary's users below are made.
    await waitFor(`MariaDB on ${machine}`, () => answersOverSocket(socket), {
      exited,
      logFile: path.join(dir, `${machine}.log`),
    });
  }
  const [primary, replica] = servers;
  const overSocket = (server) =>
    createConnection({ socketPath: server.socket, user: 'root', multipleStatements: true });
  const primaryConnection = await overSocket(primary);
  // Made on the primary, so the replica gets them by replication too: the apps (and this host) reach
  // root over the network, the replica its copy as `repl`.
  await primaryConnection.query(
    `CREATE USER 'root'@'%'; GRANT ALL ON *.* TO 'root'@'%' WITH GRANT OPTION;
     CREATE USER 'repl'@'%' IDENTIFIED BY 'repl'; GRANT REPLICATION SLAVE ON *.* TO 'repl'@'%';`,
  );
  await primaryConnection.end();
  const replicaConnection = await overSocket(replica);
  await replicaConnection.query(
    `CHANGE MASTER TO MASTER_HOST='${network.machines['mysql-1'].address}', MASTER_PORT=3306,
       MASTER_USER='repl', MASTER_PASSWORD='repl', MASTER_USE_GTID=slave_pos; START SLAVE;`,
  );
  await replicaConnection.end();
  log(`MariaDB primary on mysql-1, replica on mysql-2`);
  return { primary: network.machines['mysql-1'].address, replica: network.machines['mysql-2'].address };
}

async function answersOverSocket(socketPath) {
  const connection = await createConnection({ socketPath, user: 'root', connectTimeout: 1_000 });
  await connection.end();
  return true;
}

/**
 * Six nodes, two a machine: the master of redis-k, and the replica of the master of the next machine
 * over, so a machine lost takes one master and another master's replica, never a master and its copy.
 * Node settings as the compose profile's (AOF everysec, a 5 s node timeout). Returns the masters.
 */
async function startRedisCluster(network, binaries, dir) {
  const node = (machine, role) => ({ machine, host: network.machines[machine].address, port: REDIS_PORTS[role] });
  const masters = REDIS_MACHINES.map((machine) => node(machine, 'master'));
  const replicas = REDIS_MACHINES.map((machine) => node(machine, 'replica'));
  for (const { machine, host, port } of [...masters, ...replicas]) {
    const nodeDir = path.join(dir, `${machine}-${port}`);
    mkdirSync(nodeDir, { recursive: true });
    // prettier-ignore
    const args = ['--port', String(port), '--bind', host, '--protected-mode', 'no', '--dir', nodeDir,
      '--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', '5000',
      '--appendonly', 'yes', '--appendfsync', 'everysec', '--save', '', '--daemonize', 'no'];
    const logFile = path.join(dir, `${machine}-redis-${port}.log`);
    const { exited } = network.spawn(machine, binaries.redisServer, args, { logFile });
    await waitFor(
      `Redis ${host}:${port}`,
      () => redisCli(binaries, host, port, ['ping']).then((out) => out.trim() === 'PONG'),
      {
        exited,
        logFile,
      },
    );
  }
  await run(binaries.redisCli, [
    '--cluster',
    'create',
    ...masters.map(({ host, port }) => `${host}:${port}`),
    '--cluster-replicas',
    '0',
    '--cluster-yes',
  ]);
  for (const [index, replica] of replicas.entries()) {
    // The replica on redis-k copies the master of redis-(k+1).
    const master = masters[(index + 1) % masters.length];
    const masterId = (await redisCli(binaries, master.host, master.port, ['cluster', 'myid'])).trim();
    await run(binaries.redisCli, [
      '--cluster',
      'add-node',
      `${replica.host}:${replica.port}`,
      `${master.host}:${master.port}`,
      '--cluster-slave',
      '--cluster-master-id',
      masterId,
    ]);
  }
  await waitFor('the Redis Cluster to be formed, every replica in sync', async () => {
    for (const { host, port } of [...masters, ...replicas]) {
      const info = await redisCli(binaries, host, port, ['cluster', 'info']).catch(() => '');
      if (!info.includes('cluster_state:ok')) return false;
    }
    for (const { host, port } of replicas) {
      const replication = await redisCli(binaries, host, port, ['info', 'replication']).catch(() => '');
      if (!replication.includes('master_link_status:up')) return false;
    }
    return true;
  });
  log(`Redis Cluster: masters on ${REDIS_MACHINES.join(', ')}, each one's replica on the next machine`);
  return masters.map(({ host, port }) => `${host}:${port}`);
}

async function redisCli(binaries, host, port, args) {
  return (await run(binaries.redisCli, ['-h', host, '-p', String(port), ...args], { timeout: 5_000 })).stdout;
}

/** Migrations from this host, as compose's one-shot `migrate` service runs them. */
async function migrate(appEnv, dir) {
  try {
    await run(process.execPath, [path.join(ROOT, 'libs/db/dist/migrate.js')], { env: appEnv, cwd: ROOT });
  } catch (error) {
    writeFileSync(path.join(dir, 'migrate.log'), `${error.stdout ?? ''}${error.stderr ?? ''}`);
    throw new Error(`migrations failed: ${error.stderr || error.message}`);
  }
}

function startApps(network, appEnv, dir) {
  for (const machine of API_MACHINES) {
    network.spawn(machine, process.execPath, [path.join(ROOT, 'apps/api/dist/main.js')], {
      logFile: path.join(dir, `${machine}.log`),
      env: appEnv,
      cwd: ROOT,
    });
  }
  for (const machine of WORKER_MACHINES) {
    network.spawn(machine, process.execPath, [path.join(ROOT, 'apps/worker/dist/main.js')], {
      logFile: path.join(dir, `${machine}.log`),
      env: appEnv,
      cwd: ROOT,
    });
  }
}

const balancerSocket = (dir) => path.join(dir, 'haproxy.sock');

/** The balancer's view of each API server (`show stat`): its status and the requests it was sent. */
function balancerView(dir) {
  return new Promise((resolve, reject) => {
    let text = '';
    const socket = connect(balancerSocket(dir), () => socket.end('show stat\n'));
    socket.on('data', (chunk) => (text += chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const [header, ...rows] = text.trim().split('\n');
      const columns = header.replace(/^# /, '').split(',');
      const view = {};
      for (const row of rows) {
        const fields = Object.fromEntries(row.split(',').map((value, i) => [columns[i], value]));
        if (fields.pxname === 'api' && fields.svname.startsWith('api-')) {
          view[fields.svname] = { status: fields.status, requests: Number(fields.stot) };
        }
      }
      resolve(view);
    });
  });
}

async function startBalancer(network, binaries, dir) {
  const config = renderBalancerConfig(
    readFileSync(path.join(ROOT, 'deploy/haproxy.cfg'), 'utf8'),
    API_MACHINES.map((machine) => `${network.machines[machine].address}:${API_PORT}`),
  );
  const file = path.join(dir, 'haproxy.cfg');
  // One line more than the deployed file: a stats socket, where the rehearsal reads the balancer's view.
  writeFileSync(file, config.replace(/^global\n/m, `global\n    stats socket ${balancerSocket(dir)} mode 600\n`));
  await run(binaries.haproxy, ['-c', '-q', '-f', file]);
  network.spawn('lb', binaries.haproxy, ['-f', file, '-db'], { logFile: path.join(dir, 'lb.log') });
}

async function waitForReady(network, baseUrl, dir) {
  for (const machine of API_MACHINES) {
    await waitFor(
      `${machine} to say ready`,
      () => httpAnswers(`http://${network.machines[machine].address}:${API_PORT}/health/ready`),
      {
        timeoutMs: 90_000,
        logFile: path.join(dir, `${machine}.log`),
      },
    );
  }
  await waitFor('the balancer to pass requests', () => httpAnswers(`${baseUrl}/health/ready`), {
    logFile: path.join(dir, 'lb.log'),
  });
  log(`ready: ${API_MACHINES.length} API machines behind ${baseUrl}`);
}

/** `buyers` guests, each one submit token and one purchase, 50 at a time, through the balancer. */
async function sellBurst(baseUrl, { buyers, stock }) {
  const admin = (await call(baseUrl, 'POST', '/api/auth/admin', { password: ADMIN_PASSWORD }, undefined, 201)).token;
  const sale = await call(
    baseUrl,
    'POST',
    '/api/admin/sales',
    {
      name: 'Rehearsal sale',
      priceCents: 1999,
      stock,
      perUserLimit: 1,
      endsAt: new Date(Date.now() + 3_600_000).toISOString(),
      purpose: 'load-test',
    },
    admin,
    201,
  );
  const statuses = {};
  let next = 0;
  const startedAt = performance.now();
  const buyer = async () => {
    while (next < buyers) {
      next += 1;
      const guest = await call(baseUrl, 'POST', '/api/auth/guest', {}, undefined, 201);
      const { token } = await call(baseUrl, 'POST', `/api/sales/${sale.id}/tokens`, undefined, guest.token, 201);
      const status = await purchase(baseUrl, sale.id, token, guest.token);
      statuses[status] = (statuses[status] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: Math.min(50, buyers) }, buyer));
  const seconds = (performance.now() - startedAt) / 1000;
  log(`burst: ${buyers} buyers in ${seconds.toFixed(1)} s, answers ${JSON.stringify(statuses)}`);
  return { saleId: sale.id, admin, statuses, accepted: statuses[202] ?? 0 };
}

/** One purchase; a 429 or 503 with retry-after means nothing happened: sent again after the wait. */
async function purchase(baseUrl, saleId, token, accessToken) {
  for (let attempt = 0; attempt < 20; attempt++) {
    const response = await fetch(`${baseUrl}/api/sales/${saleId}/purchase`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${accessToken}` },
      body: JSON.stringify({ token }),
    });
    await response.arrayBuffer();
    const retryAfter = Number(response.headers.get('retry-after'));
    if ((response.status === 429 || response.status === 503) && retryAfter >= 0) {
      await new Promise((resolve) => setTimeout(resolve, Math.max(100, retryAfter * 1000)));
      continue;
    }
    return response.status;
  }
  return 'retries-exhausted';
}

/** The purchases each API machine has answered, from its own metrics (whether the balancer spreads the crowd). */
async function purchasesByApi(network) {
  const counts = {};
  for (const machine of API_MACHINES) {
    const response = await fetch(`http://${network.machines[machine].address}:${API_PORT}/metrics`, {
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
    });
    const text = await response.text();
    counts[machine] = text
      .split('\n')
      .filter((line) => line.startsWith('flash_sale_purchases_total{'))
      .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
  }
  return counts;
}

/** Until the workers have written every accepted order; then the audit's verdict. */
async function awaitWrittenAndAudit(baseUrl, burst) {
  let audit;
  await waitFor(`the ${burst.accepted} accepted orders to be written`, async () => {
    audit = await call(baseUrl, 'GET', `/api/admin/sales/${burst.saleId}/audit`, undefined, burst.admin, 200);
    const written = Object.entries(audit.ordersByStatus ?? {})
      .filter(([status]) => status !== 'QUEUED')
      .reduce((sum, [, count]) => sum + count, 0);
    return written >= burst.accepted;
  });
  const rowsOnPrimary = Object.values(audit.ordersByStatus ?? {}).reduce((sum, count) => sum + count, 0);
  return { ...audit, rowsOnPrimary };
}

/** The replica's copy of the sale's orders, once it has caught up (or what it had after 30 s). */
async function awaitReplica(mysql, saleId, rowsOnPrimary) {
  const connection = await createConnection({ host: mysql.replica, user: 'root', database: 'flash_sale' });
  try {
    let rows = 0;
    const caughtUp = await waitUntil(async () => {
      const [[row]] = await connection.query('SELECT COUNT(*) AS n FROM orders WHERE sale_id = ?', [saleId]);
      rows = Number(row.n);
      return rows === rowsOnPrimary;
    }, 30_000);
    return { rows, caughtUp };
  } finally {
    await connection.end();
  }
}

function report(burst, audit, replicated, stock) {
  const checks = [
    [
      'every buyer was answered 202 or 410',
      Object.keys(burst.statuses).every((status) => ['202', '410'].includes(status)),
    ],
    [`units sold ≤ stock (${burst.accepted} of ${stock})`, burst.accepted <= stock],
    [
      'the balancer sees every API machine up',
      API_MACHINES.every((machine, index) => burst.balancer[`api-${index + 1}`]?.status === 'UP'),
    ],
    ['the audit passed (no oversell, no lost order, no duplicate)', audit.ok === true],
    [`the replica holds every order row (${replicated.rows} of ${audit.rowsOnPrimary})`, replicated.caughtUp],
  ];
  for (const [what, ok] of checks) log(`${ok ? 'PASS' : 'FAIL'}  ${what}`);
  if (audit.ok !== true) log(`audit: ${JSON.stringify(audit)}`);
  return checks.every(([, ok]) => ok);
}

function printMachines(network, baseUrl) {
  log('machines:');
  for (const machine of Object.values(network.machines)) {
    log(`  ${machine.name.padEnd(9)} ${machine.address.padEnd(14)} (namespace ${machine.namespace})`);
  }
  log(`the balancer (the API, and the storefront once built): ${baseUrl}`);
}

function printHowToLoad(baseUrl) {
  log('holding the deployment up until Ctrl-C. From this host:');
  log(`  k6 run -e BASE_URL=${baseUrl} load-tests/flash-sale-burst.ts`);
  log(`  k6-0.48 run -e BASE_URL=${baseUrl} load-tests/dist/flash-sale-burst.js   (after npm run k6:bundle)`);
}

async function call(baseUrl, method, route, body, token, expectStatus) {
  const headers = body === undefined ? {} : { 'content-type': 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  const response = await fetch(`${baseUrl}${route}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (response.status !== expectStatus) throw new Error(`${method} ${route} answered ${response.status}: ${text}`);
  return text ? JSON.parse(text) : undefined;
}

/** Until `check` holds, or throws naming what it waited for (and the end of its log). */
async function waitFor(what, check, { timeoutMs = 60_000, exited, logFile } = {}) {
  let gone = false;
  exited?.then(() => (gone = true));
  const ok = await waitUntil(async () => gone || (await check().catch(() => false)), timeoutMs);
  if (ok && !gone) return;
  const why = gone ? 'its process exited' : `not within ${timeoutMs / 1000} s`;
  throw new Error(`waited for ${what}: ${why}${logFile ? `. Last lines of ${logFile}:\n${tail(logFile)}` : ''}`);
}

async function tearDown(deployment, passed) {
  if (deployment.tornDown) return;
  deployment.tornDown = true;
  await deployment.network?.destroy();
  for (const child of killOnExit) child.kill('SIGKILL');
  if (passed && !deployment.keepLogs) rmSync(deployment.dir, { recursive: true, force: true });
  else log(`logs kept in ${deployment.dir}`);
  log('torn down: no machine, link or process of the rehearsal is left');
}

/** Ctrl-C (or a signal from a supervisor) tears down first; another signal meanwhile changes nothing. */
function onInterrupt(deployment) {
  let stopping = false;
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(signal, async () => {
      if (stopping) return;
      stopping = true;
      log(`${signal}: tearing down`);
      await tearDown(deployment, true);
      process.exit(130);
    });
  }
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(`[rehearsal] FAILED: ${error?.stack ?? error}`);
    process.exit(1);
  },
);
