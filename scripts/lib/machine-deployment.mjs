/**
 * The compose deployment as machines on a real network (scripts/lib/machines.mjs), started from the
 * built app and the real servers: what `npm run rehearsal` runs, and what the tests that cut its links
 * start (docs/operations.md, "Running on several machines").
 *
 *   lb                    HAProxy with deploy/haproxy.cfg, its replicas named by address instead of Docker's DNS
 *   api-1, api-2          one API process each (apps/api/dist/main.js)
 *   worker-1, worker-2    one worker each
 *   redis-1..3            a Redis Cluster of 3 masters and 3 replicas, two nodes a machine, no master on
 *                         the machine of its own replica (the compose profile's node settings)
 *   mysql-1, mysql-2      a MariaDB primary and its replica (semi-synchronous replication), reached at floating
 *                         addresses that a failover moves (mysql-machines.mjs)
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { renderBalancerConfig } from './balancer-config.mjs';
import { createMachines } from './machines.mjs';
import { httpAnswers } from './probes.mjs';
import { MYSQL_FLOATING, MYSQL_MACHINES, startMysqlPair } from './mysql-machines.mjs';
import { findExecutable, waitFor } from './processes.mjs';

/**
 * The repository: the nearest folder up from here with the workspace's `nx.json` — from scripts/lib, from
 * the explorer's compiled copy (test/chaos/dist/scripts/lib), or from the working directory where this
 * module is bundled into a script that has no `import.meta.url`.
 */
const ROOT = repositoryRoot();

function repositoryRoot() {
  let dir = typeof import.meta.url === 'string' ? path.dirname(fileURLToPath(import.meta.url)) : process.cwd();
  for (let up = 0; up < 8; up++, dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'nx.json'))) return dir;
  }
  return process.cwd();
}
const run = promisify(execFile);
export const ADMIN_PASSWORD = 'admin';
const METRICS_TOKEN = 'rehearsal-only-metrics-token';
export const API_PORT = 3000;
const REDIS_PORTS = { master: 6379, replica: 6380 };
export const API_MACHINES = ['api-1', 'api-2'];
const WORKER_MACHINES = ['worker-1', 'worker-2'];
const REDIS_MACHINES = ['redis-1', 'redis-2', 'redis-3'];
export const MACHINES = ['lb', ...API_MACHINES, ...WORKER_MACHINES, ...REDIS_MACHINES, ...MYSQL_MACHINES];

/**
 * @typedef {object} MachineDeployment
 * @property {import('./machines.mjs').MachineNetwork} network
 * @property {string} baseUrl The balancer's origin.
 * @property {{ primary: string, replica: string }} mysql The addresses of the primary and the replica as
 *   started (mysql-1's and mysql-2's own).
 * @property {import('./mysql-machines.mjs').MysqlPair} mysqlPair Their roles now, a failover, a restore.
 * @property {string} databaseUrl The app's database at the primary's floating address, as this host reaches it.
 * @property {{ host: string, port: number }[]} redisMasters The cluster's masters as started (one a machine).
 * @property {Record<string, string>} appEnv The environment every API and worker machine runs with.
 * @property {() => Promise<void>} settle Every link healed, each Redis master back on its own machine with
 *   its replica in sync, a MySQL primary lost to a failover rebuilt as the replica, every API machine
 *   ready and up behind the balancer.
 * @property {() => Promise<Record<string, { status: string, requests: number }>>} balancerView
 * @property {() => Promise<Record<string, number>>} purchasesByApi
 * @property {() => Promise<void>} stop Tears every machine down.
 */

/**
 * Starts the deployment in `dir` (the servers' data and every log) and resolves once the balancer passes
 * requests to every API machine.
 * `env`: settings for the apps on top of the deployment's own (the explorer's shorter timings, say).
 * `mysqlReplication`: `semi-sync` (the default) or `async` (to watch a failover lose commits).
 * @param {{ dir: string, log?: (line: string) => void, env?: Record<string, string>,
 *   mysqlReplication?: 'semi-sync' | 'async' }} options
 * @returns {Promise<MachineDeployment>}
 */
export async function startMachineDeployment({ dir, log = () => undefined, env = {}, mysqlReplication }) {
  const binaries = requiredBinaries();
  const entries = ['apps/api/dist/main.js', 'apps/worker/dist/main.js', 'libs/db/dist/migrate.js'];
  const unbuilt = entries.filter((entry) => !existsSync(path.join(ROOT, entry)));
  if (unbuilt.length > 0) throw new Error(`the app is not built (${unbuilt.join(', ')}): run npx tsc -b tsconfig.json`);
  const network = await createMachines(MACHINES, { floating: Object.values(MYSQL_FLOATING) });
  try {
    const address = (name) => network.machines[name].address;
    log(
      `${MACHINES.length} machines (network ${network.id}) on ${network.subnet}, this host ${network.hostAddress}; logs in ${dir}`,
    );
    const mysqlPair = await startMysqlPair(network, binaries, dir, { replication: mysqlReplication });
    const floating = (name) => network.floating[name].address;
    log(
      `MariaDB primary on mysql-1 (at ${floating(MYSQL_FLOATING.primary)}), replica on mysql-2 (at ${floating(MYSQL_FLOATING.replica)})`,
    );
    const redis = await startRedisCluster(network, binaries, dir);
    const appEnv = {
      PATH: process.env.PATH,
      NODE_ENV: 'development',
      // The floating addresses: a failover moves them to the promoted machine, the apps stay as they are.
      DATABASE_URL: `mysql://root@${floating(MYSQL_FLOATING.primary)}:3306/flash_sale`,
      // The reads that may lag (the admin's order pages) go to the replica; a buyer's own orders too, once
      // it has caught up with the primary (libs/db replica-reads.ts).
      DATABASE_REPLICA_URL: `mysql://root@${floating(MYSQL_FLOATING.replica)}:3306/flash_sale`,
      REDIS_CLUSTER_NODES: redis.masters.map(({ host, port }) => `${host}:${port}`).join(','),
      JWT_SECRET: 'rehearsal-only-jwt-secret',
      ADMIN_PASSWORD,
      PAYMENT_WEBHOOK_SECRET: 'rehearsal-only-payment-webhook-secret',
      METRICS_TOKEN,
      // One client address (this host's, forwarded by the balancer) speaks for every buyer of a burst.
      RATE_LIMIT_PROFILE: 'load-test',
      TRUST_PROXY: address('lb'),
      HOST: '0.0.0.0',
      PORT: String(API_PORT),
      ...env,
    };
    await migrate(appEnv, dir);
    startApps(network, appEnv, dir);
    await startBalancer(network, binaries, dir);
    const baseUrl = `http://${address('lb')}:${API_PORT}`;
    await waitForReady(network, baseUrl, dir);
    return {
      network,
      baseUrl,
      mysql: { primary: address('mysql-1'), replica: address('mysql-2') },
      mysqlPair,
      databaseUrl: appEnv.DATABASE_URL,
      redisMasters: redis.masters.map(({ host, port }) => ({ host, port })),
      appEnv,
      settle: async () => {
        await network.healAll();
        const healedAt = Date.now();
        await mysqlPair.restore();
        await settleRedis(binaries, redis, { log, healedAt });
        await waitForReady(network, baseUrl, dir);
      },
      balancerView: () => balancerView(dir),
      purchasesByApi: () => purchasesByApi(network),
      stop: () => network.destroy(),
    };
  } catch (error) {
    await network.destroy();
    throw error;
  }
}

function requiredBinaries() {
  const found = {
    haproxy: findExecutable(['haproxy']),
    redisServer: findExecutable(['redis-server']),
    redisCli: findExecutable(['redis-cli']),
    mariadbd: findExecutable(['mariadbd']),
    installDb: findExecutable(['mariadb-install-db']),
    mariadb: findExecutable(['mariadb']),
    mariadbDump: findExecutable(['mariadb-dump']),
  };
  const missing = Object.entries(found)
    .filter(([, binary]) => !binary)
    .map(([name]) => name);
  if (missing.length > 0) {
    throw new Error(`missing: ${missing.join(', ')} (Debian: apt-get install haproxy redis-server mariadb-server)`);
  }
  return found;
}

/**
 * Six nodes, two a machine: the master of redis-k, and the replica of the master of the next machine
 * over, so a machine lost takes one master and another master's replica, never a master and its copy.
 * Node settings as the compose profile's (AOF everysec, a 5 s node timeout).
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
  return { masters, replicas };
}

/**
 * After faults: every node sees the cluster whole, each machine's master node is a master again (a
 * replica promoted while it was cut off hands the slots back by a coordinated CLUSTER FAILOVER, so a later
 * fault meets the layout the deployment was made with), and every replica is in sync.
 */
async function settleRedis(binaries, { masters, replicas }, { log, healedAt }) {
  const everyNode = [...masters, ...replicas];
  const whole = async () => {
    for (const { host, port } of everyNode) {
      const info = await redisCli(binaries, host, port, ['cluster', 'info']);
      if (!info.includes('cluster_state:ok')) return false;
    }
    return true;
  };
  await waitFor('every Redis node to see the cluster whole again', whole, { timeoutMs: 90_000 });
  for (const { machine, host, port } of masters) {
    await waitFor(
      `the master node of ${machine} to be a master again`,
      async () => {
        const replication = await redisCli(binaries, host, port, ['info', 'replication']);
        if (replication.includes('role:master')) return true;
        // Only once it has caught up with the master it follows: then the hand-over loses nothing.
        if (replication.includes('master_link_status:up'))
          await redisCli(binaries, host, port, ['cluster', 'failover']);
        return false;
      },
      { timeoutMs: 90_000 },
    );
  }
  await waitFor(
    'every Redis replica in sync, the cluster whole',
    async () => {
      for (const { host, port } of replicas) {
        if (!(await replicaHasCaughtUp(binaries, host, port))) return false;
      }
      return whole();
    },
    { timeoutMs: 90_000 },
  );
  log(`every Redis replica caught up with its master ${Date.now() - healedAt} ms after the heal`);
}

/**
 * Whether a replica holds what its master had a moment ago, as the master knows it: the offset the replica
 * acknowledged (sent every second) reaches the master's own, read first — what a `WAIT` there counts.
 * The link's `up` alone is not enough: after a partition heals, a replication link can stay silent in
 * either direction (both ends call it up, nothing carried) until TCP's retransmission backoff resends or
 * `repl-timeout` (60 s) ends it, and until then no `WAIT` on that master is confirmed
 * (docs/failure-model.md).
 */
async function replicaHasCaughtUp(binaries, host, port) {
  const replica = await redisCli(binaries, host, port, ['info', 'replication']);
  if (!replica.includes('role:slave') || !replica.includes('master_link_status:up')) return false;
  const master = { host: infoField(replica, 'master_host'), port: infoField(replica, 'master_port') };
  const masterReplication = () => redisCli(binaries, master.host, master.port, ['info', 'replication']);
  const target = Number(infoField(await masterReplication(), 'master_repl_offset'));
  const acknowledged = new RegExp(`^slave\\d+:ip=${host.replace(/\./g, '\\.')},port=${port},.*?offset=(\\d+)`, 'm');
  const until = Date.now() + 1_500;
  while (Date.now() < until) {
    const offset = Number(acknowledged.exec(await masterReplication())?.[1] ?? -1);
    if (offset >= target) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}

/** A field of `INFO`'s answer (`master_host`, say). */
const infoField = (info, name) => new RegExp(`^${name}:(\\S+)`, 'm').exec(info)?.[1];

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
  const entries = [
    ...API_MACHINES.map((machine) => [machine, 'apps/api/dist/main.js']),
    ...WORKER_MACHINES.map((machine) => [machine, 'apps/worker/dist/main.js']),
  ];
  for (const [machine, entry] of entries) {
    network.spawn(machine, process.execPath, [path.join(ROOT, entry)], {
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
  // Its checks took the APIs for down while they started: up again after two checks that pass.
  await waitFor(
    'the balancer to see every API machine up',
    async () => {
      const view = await balancerView(dir);
      return API_MACHINES.every((machine, index) => view[`api-${index + 1}`]?.status === 'UP');
    },
    { logFile: path.join(dir, 'lb.log') },
  );
  await waitFor('the balancer to pass requests', () => httpAnswers(`${baseUrl}/health/ready`), {
    logFile: path.join(dir, 'lb.log'),
  });
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
