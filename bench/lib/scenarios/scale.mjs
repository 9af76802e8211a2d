/**
 * (f) Scale: what a second API process and a sharded Redis change for one hot redis-lua sale.
 *
 * - API processes: live purchases/s with the main stack's single API, then with BENCH_SCALE_PROCESSES
 *   API processes behind one port (bench/api-processes.mjs, Node's cluster module), the same worker,
 *   Redis and MariaDB; with each configuration's machine CPU per purchase (the live scenario's
 *   measure). On a small machine the load generator competes for the same cores.
 * - Redis Cluster: a second stack (its own API, worker and database) on a three-master Redis Cluster,
 *   one hot sale with 1 bucket, then one whose stock is spread over BENCH_SCALE_BUCKETS buckets
 *   (create-sale `buckets`); each master's share of the script time shows whether the sale's load is
 *   spread. A build that refuses the option is reported as such, not as a failure.
 * - Durable acknowledgement: a three-master Redis Cluster with a replica per master and a stack of its
 *   own, one hot sale (1 bucket) with the API on DURABLE_ACK=off, then (API and worker restarted, a new
 *   sale) on DURABLE_ACK=replica, where a 202 waits for a replica to hold the reservation (WAIT); Redis
 *   time summed over every node, replicas included, and the WAIT calls that show the setting engaged.
 */
import path from 'node:path';
import { adminSales, httpClient } from '../api-client.mjs';
import { APP_DIST, require } from '../app-dist.mjs';
import { percent, ratio, round } from '../format.mjs';
import { waitForOrdersWritten } from '../orders.mjs';
import { childPids, perAcceptedPurchase, processTicks } from '../sampling.mjs';
import { REDIS_KEY_PREFIX, SETTINGS, TMP, log } from '../settings.mjs';
import { childDied, createExtraDatabase, startChild, state, stopChild, waitForHttp, waitForLog } from '../stack.mjs';
import { freePort } from '../../../scripts/lib/ports.mjs';
import { startRedisCluster } from '../../../scripts/lib/redis-cluster.mjs';

/** The busiest master's share of all script time that a sale spread over buckets should stay under. */
export const BUSIEST_MASTER_SCRIPT_SHARE = 0.4;
const CLUSTER_MASTERS = 3;
/** The durable acknowledgement's settings, measured in this order (docs/failure-model.md). */
const DURABLE_ACK_SETTINGS = ['off', 'replica'];

export async function runScale(run) {
  run.results.scale = {
    processes: await measureApiProcesses(run),
    cluster: await measureClusterBuckets(run),
    durableAck: await measureDurableAck(run),
  };
}

// ---------------------------------------------------------------------------------------------
// API processes

async function measureApiProcesses(run) {
  const sale = await run.sales.create('bench scale: API processes', SETTINGS.liveStock);
  // Before any load (the section may run alone): the bench's submit tokens must verify in the API.
  await run.buyers.checkSameSigningKey(run.http, sale.id);
  const purchases = purchaseRuns(run, sale.id);
  const rows = [];
  rows.push({ processes: 1, how: "the main stack's API", ...(await purchases.measure('1 API process', {})) });

  const processes = SETTINGS.scaleProcesses;
  const port = await freePort();
  const launcher = startChild('api-processes', 'bench/api-processes.mjs', {
    ...run.appEnv,
    PORT: String(port),
    BENCH_API_PROCESSES: String(processes),
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  await waitForHttp(`${baseUrl}/api/sales`, launcher);
  await waitForLog(launcher, `all ${processes} API processes listening`);
  const apiPids = [launcher.pid, ...childPids(launcher.pid)];
  log(`${processes} API processes on ${baseUrl}: primary ${launcher.pid}, processes ${apiPids.slice(1).join(', ')}`);
  try {
    const ticksBefore = apiPids.map((pid) => processTicks(pid));
    const measured = await purchases.measure(`${processes} API processes`, {
      baseUrl,
      pids: { api: apiPids, worker: state.workerPid },
    });
    // Whether every process served its share (the primary should be near 0 once connections are open).
    const used = apiPids.map((pid, i) => (processTicks(pid) ?? 0) - (ticksBefore[i] ?? 0));
    const total = used.reduce((sum, ticks) => sum + ticks, 0);
    const apiCpuShares = used.map((ticks) => (total ? round(ticks / total, 2) : null));
    log(`scale: API CPU per process (primary first), warm-up and run: ${apiCpuShares.map(percent).join(', ')}`);
    rows.push({
      processes,
      how: "Node's cluster module: one port, connections handed out in turn",
      ...measured,
      apiCpuShares,
    });
  } finally {
    await stopChild(launcher);
  }
  const [one, many] = rows;
  const result = {
    saleId: sale.id,
    rows,
    reqPerSecRatio: ratio(many.reqPerSec, one.reqPerSec),
    machineCpuPerPurchaseRatio: ratio(many.perAccepted.machineCpuUs, one.perAccepted.machineCpuUs),
  };
  log(
    `scale: ${processes} API processes / 1: purchases/s ×${result.reqPerSecRatio}, ` +
      `machine CPU per purchase ×${result.machineCpuPerPurchaseRatio}`,
  );
  return result;
}

/**
 * Warm-up and measured runs on one hot sale, each lasting until the worker has written its orders
 * (so a purchase's machine CPU includes writing it). `target`: another API (`baseUrl`, `pids`,
 * `redisNodes`, the `worker` and `database` whose rows to wait for, the `redis` to store tokens in).
 */
function purchaseRuns(run, saleId, buckets = 1) {
  let accepted = 0;
  const once = async (label, target, { key, pairCount, durationS }) => {
    const { worker, database, redis, ...loadTarget } = target;
    const summary = await run.load({
      key,
      label,
      saleId,
      pairs: await run.buyers.preparePairs(saleId, pairCount, { redis, buckets }),
      expect: 202,
      durationS,
      settle: (statuses) => waitForOrdersWritten(saleId, accepted + (statuses[202] ?? 0), { worker, database }),
      ...loadTarget,
    });
    accepted += summary.statusCounts[202] ?? 0;
    return summary;
  };
  return {
    async measure(name, target) {
      log(`scale: warm-up ${SETTINGS.warmupS}s, ${name}`);
      const warmup = await once(`scale warm-up, ${name}`, target, {
        key: 'scaleWarmup',
        pairCount: Math.min(SETTINGS.users, 60_000),
        durationS: SETTINGS.warmupS,
      });
      run.answeredAsExpected(`scale warm-up, ${name}: every answer 202`, warmup);
      log(`scale: preparing ${SETTINGS.users} pairs, ${name}`);
      const measured = await once(`scale: ${name}`, target, {
        key: 'scale',
        pairCount: SETTINGS.users,
        durationS: SETTINGS.durationS,
      });
      run.answeredAsExpected(`scale, ${name}: every answer 202`, measured);
      return { ...measured, perAccepted: perAcceptedPurchase(measured) };
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Redis Cluster: the cluster, and a stack of its own on it

/**
 * A local Redis Cluster of CLUSTER_MASTERS masters (each with `replicasPerMaster` replicas) for as long
 * as `use({ nodes, cluster })` runs: `nodes` (clusterNodes) and `cluster`, the app's own cluster client
 * (for the buyers' submit tokens, and cluster-wide reads). Stopped afterwards, whatever happened.
 */
async function withRedisCluster(run, { name, replicasPerMaster = 0, nodeTimeoutMs }, use) {
  log(
    `scale: starting a ${CLUSTER_MASTERS}-master Redis Cluster` +
      (replicasPerMaster ? ` with ${replicasPerMaster} replica per master` : ''),
  );
  state.redisCluster = await startRedisCluster({
    masters: CLUSTER_MASTERS,
    replicasPerMaster,
    // A directory per cluster: a node config file left by an earlier cluster on the same port would rejoin it.
    dir: path.join(TMP, name),
    nodeTimeoutMs,
    onUnexpectedExit: childDied,
  });
  let nodes = [];
  let cluster;
  try {
    nodes = await clusterNodes(state.redisCluster);
    const { createRedisClient } = require('@flash-sale/redis');
    cluster = createRedisClient({ url: run.redisUrl, clusterNodes: nodes.map((node) => node.address) });
    return await use({ nodes, cluster });
  } finally {
    cluster?.disconnect();
    for (const node of nodes) node.client.disconnect();
    await state.redisCluster.stop();
    state.redisCluster = undefined;
  }
}

/**
 * An API and a worker of their own on the Redis Cluster `nodes` and `database` (`env`: more settings
 * of theirs), up and ready: the admin's `sales`, the load `target` for purchaseRuns (CPU of every
 * node, masters and replicas, and `INFO commandstats` of each), and `stop()`.
 */
async function startClusterStack(run, { name, nodes, cluster, database, env: extraEnv = {} }) {
  const port = await freePort();
  const env = {
    ...run.appEnv,
    PORT: String(port),
    DATABASE_URL: database.url,
    REDIS_CLUSTER_NODES: nodes.map((node) => node.address).join(','),
    WORKER_METRICS_PORT: String(await freePort()),
    ...extraEnv,
  };
  const api = startChild(`api-${name}`, APP_DIST.api, env);
  const worker = startChild(`worker-${name}`, APP_DIST.worker, env);
  const stop = () => Promise.all([stopChild(api), stopChild(worker)]);
  const baseUrl = `http://127.0.0.1:${port}`;
  try {
    await waitForHttp(`${baseUrl}/api/sales`, api);
    await waitForLog(worker, 'Worker consuming');
    const settings = Object.entries(extraEnv).map(([key, value]) => `, ${key}=${value}`);
    log(
      `scale: ${name} stack up (API ${baseUrl} pid ${api.pid}, worker pid ${worker.pid}, ` +
        `database ${database.name}${settings.join('')})`,
    );
    return {
      sales: await adminSales(httpClient(baseUrl)),
      target: {
        baseUrl,
        pids: { api: api.pid, worker: worker.pid, redis: nodes.map((node) => node.pid) },
        redisNodes: nodes.map((node) => ({ name: node.address, client: node.client })),
        worker,
        database: database.name,
        redis: cluster,
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * Every node's address, pid, role (`master`, or `replica` of `replicaOf`), slot ranges (`first-last, …`;
 * a replica's are empty) and a plain client of its own (INFO, KEYSLOT). The role is each node's own word
 * (`INFO replication`): another node's `CLUSTER NODES` can still show a fresh replica as a master.
 */
async function clusterNodes(redisCluster) {
  const { Redis } = require('ioredis');
  const topology = await redisCluster.topology();
  return Promise.all(
    redisCluster.ports.map(async (port) => {
      const client = new Redis(port, '127.0.0.1', { maxRetriesPerRequest: 1 });
      const replication = await client.info('replication');
      const masterPort = /^master_port:(\d+)/m.exec(replication)?.[1];
      const replica = /^role:slave/m.test(replication) && masterPort !== undefined;
      return {
        address: `127.0.0.1:${port}`,
        pid: redisCluster.pid(port),
        role: replica ? 'replica' : 'master',
        ...(replica && { replicaOf: `127.0.0.1:${masterPort}` }),
        slots: replica
          ? ''
          : (topology.find((node) => node.port === port)?.slots ?? [])
              .map(([first, last]) => (first === last ? `${first}` : `${first}-${last}`))
              .join(', '),
        client,
      };
    }),
  );
}

// ---------------------------------------------------------------------------------------------
// Redis Cluster, one hot sale over K buckets

function measureClusterBuckets(run) {
  // Under the bench's load a master may stall past the tests' 2 s; with no replica it would only fail.
  return withRedisCluster(run, { name: 'redis-cluster', nodeTimeoutMs: 5_000 }, async ({ nodes, cluster }) => {
    const database = createExtraDatabase('cluster');
    const stack = await startClusterStack(run, { name: 'cluster', nodes, cluster, database });
    try {
      const rows = [];
      for (const buckets of [1, SETTINGS.scaleBuckets])
        rows.push(await measureBuckets(run, { sales: stack.sales, target: stack.target, nodes, cluster, buckets }));
      return {
        masters: nodes.map(({ address, slots }) => ({ address, slots })),
        rows,
        busiestShareTarget: BUSIEST_MASTER_SCRIPT_SHARE,
      };
    } finally {
      await stack.stop();
    }
  });
}

async function measureBuckets(run, { sales, target, nodes, cluster, buckets }) {
  const name = `Redis Cluster, ${buckets} bucket${buckets > 1 ? 's' : ''}`;
  // The option is sent only when it asks for more than the default, so K = 1 works on any build.
  const options = buckets > 1 ? { buckets } : {};
  const created = await sales.tryCreate(`bench scale: ${name}`, SETTINGS.liveStock, 'redis-lua', options);
  if (created.status !== 201) {
    // The API's error envelope (docs/api.md): { error: { code, message } }.
    const message = created.body?.error?.message ?? created.text;
    log(
      `scale: ${name}: the API refused the sale (${created.status}: ${message}); this build has no ` +
        'bucket option — not measured',
    );
    return { buckets, refused: { status: created.status, message } };
  }
  const saleId = created.body.id;
  // What the sale says it got: a build that accepted the field but dropped it sells from one bucket.
  const bucketsInAnswer = created.body.buckets;
  if (buckets > 1 && bucketsInAnswer !== buckets)
    log(
      `scale: ${name}: the sale's answer has buckets = ${bucketsInAnswer ?? '(absent)'}; ` +
        "the masters' shares will tell whether its load spread",
    );
  const { redisCommandsByNode, ...measured } = await purchaseRuns(run, saleId, bucketsInAnswer ?? 1).measure(
    name,
    target,
  );
  const masters = masterShares(redisCommandsByNode);
  const busiest = masters.reduce((max, node) => Math.max(max, node.scriptShare ?? 0), 0);
  log(
    `scale: ${name}: ${measured.reqPerSec} purchases/s; script time per master ` +
      `${masters.map((node) => `${node.node} ${Math.round((node.scriptShare ?? 0) * 100)} %`).join(', ')}`,
  );
  return {
    buckets,
    saleId,
    bucketsInAnswer: bucketsInAnswer ?? null,
    saleSlotMaster: await saleSlotMaster(cluster, nodes, saleId),
    ...measured,
    masters,
    busiestScriptShare: round(busiest, 3),
  };
}

/** Each master's share of all masters' script time, and of their command time. */
function masterShares(byNode) {
  const scriptTotal = byNode.reduce((sum, node) => sum + node.scriptUsec, 0);
  const commandTotal = byNode.reduce((sum, node) => sum + node.totalUsec, 0);
  return byNode.map((node) => ({
    ...node,
    scriptShare: scriptTotal ? round(node.scriptUsec / scriptTotal, 3) : null,
    totalShare: commandTotal ? round(node.totalUsec / commandTotal, 3) : null,
  }));
}

/** The master serving the hash slot of the sale's own keys (`{sale:<id>}`): where one bucket lives. */
async function saleSlotMaster(cluster, nodes, saleId) {
  const { KeyBuilder } = require('@flash-sale/redis');
  const slot = await nodes[0].client.cluster('KEYSLOT', new KeyBuilder(REDIS_KEY_PREFIX).sale(String(saleId)).stock);
  const serving = (await cluster.cluster('SLOTS')).find(([first, last]) => slot >= first && slot <= last);
  return serving ? `${serving[2][0]}:${serving[2][1]}` : null;
}

// ---------------------------------------------------------------------------------------------
// Durable acknowledgement: DURABLE_ACK=off, then replica, on a cluster with a replica per master

function measureDurableAck(run) {
  const options = {
    name: 'redis-cluster-replicas',
    replicasPerMaster: 1,
    // A failover in the middle of a run (a master stalled past the node timeout on a loaded machine)
    // would measure the failover, not the acknowledgement.
    nodeTimeoutMs: 15_000,
  };
  return withRedisCluster(run, options, async ({ nodes, cluster }) => {
    const database = createExtraDatabase('durable');
    const rows = [];
    for (const setting of DURABLE_ACK_SETTINGS) {
      // Fresh processes per setting: DURABLE_ACK is read as the API starts.
      const stack = await startClusterStack(run, {
        name: `durable-ack-${setting}`,
        nodes,
        cluster,
        database,
        env: { DURABLE_ACK: setting },
      });
      try {
        rows.push(await measureDurableAckSetting(run, { setting, stack, nodes, cluster }));
      } finally {
        await stack.stop();
      }
    }
    const [off, replica] = rows;
    const ratios = {
      reqPerSec: ratio(replica.reqPerSec, off.reqPerSec),
      p50: ratio(replica.latencyMs.p50, off.latencyMs.p50),
      p99: ratio(replica.latencyMs.p99, off.latencyMs.p99),
      apiCpuUs: ratio(replica.perAccepted.apiCpuUs, off.perAccepted.apiCpuUs),
      machineCpuUs: ratio(replica.perAccepted.machineCpuUs, off.perAccepted.machineCpuUs),
      redisUs: ratio(replica.perAccepted.redisUs, off.perAccepted.redisUs),
      mastersRedisUs: ratio(replica.redisUsByRole.masters, off.redisUsByRole.masters),
      replicasRedisUs: ratio(replica.redisUsByRole.replicas, off.redisUsByRole.replicas),
    };
    log(
      `scale: DURABLE_ACK replica / off: purchases/s ×${ratios.reqPerSec}, p50 ×${ratios.p50}, p99 ×${ratios.p99}, ` +
        `API CPU per purchase ×${ratios.apiCpuUs}, machine CPU per purchase ×${ratios.machineCpuUs}, ` +
        `Redis µs per purchase ×${ratios.redisUs} (masters ×${ratios.mastersRedisUs}, replicas ×${ratios.replicasRedisUs})`,
    );
    return {
      nodes: nodes.map(({ address, role, replicaOf, slots }) => ({ address, role, replicaOf, slots })),
      rows,
      ratios,
    };
  });
}

async function measureDurableAckSetting(run, { setting, stack, nodes, cluster }) {
  const name = `Redis Cluster with replicas, DURABLE_ACK=${setting}`;
  const sale = await stack.sales.create(`bench scale: ${name}`, SETTINGS.liveStock);
  const { redisCommandsByNode, ...measured } = await purchaseRuns(run, sale.id, sale.buckets ?? 1).measure(
    name,
    stack.target,
  );
  const { accepted } = measured.perAccepted;
  const roleOf = new Map(nodes.map((node) => [node.address, node.role]));
  const perNode = redisCommandsByNode.map(({ node, totalUsec, waitCalls }) => ({
    node,
    role: roleOf.get(node),
    totalUsec,
    usPerPurchase: accepted ? round(totalUsec / accepted, 1) : null,
    waitCalls,
  }));
  const usOf = (role) =>
    accepted
      ? round(perNode.filter((node) => node.role === role).reduce((sum, node) => sum + node.totalUsec, 0) / accepted, 1)
      : null;
  const waitCalls = perNode.reduce((sum, node) => sum + node.waitCalls, 0);
  // Whether the setting engaged: DURABLE_ACK=replica sends WAIT to the bucket's master (one per batch of
  // purchases), `off` never does; nothing else in the app sends WAIT.
  const engaged = setting === 'replica' ? waitCalls > 0 : waitCalls === 0;
  run.check(
    `scale, ${name}: ${setting === 'replica' ? 'the masters ran WAIT' : 'no WAIT ran'}`,
    engaged,
    `${waitCalls} WAIT calls during the measured run`,
  );
  const row = {
    setting,
    saleId: sale.id,
    saleSlotMaster: await saleSlotMaster(cluster, nodes, sale.id),
    ...measured,
    redisUsByRole: { masters: usOf('master'), replicas: usOf('replica') },
    nodes: perNode,
    waitCalls,
    waitCallsPerPurchase: accepted ? round(waitCalls / accepted, 3) : null,
  };
  log(
    `scale: ${name}: ${row.reqPerSec} purchases/s, p50 ${row.latencyMs.p50} p99 ${row.latencyMs.p99} ms; per purchase: ` +
      `API CPU ${row.perAccepted.apiCpuUs} µs, machine CPU ${row.perAccepted.machineCpuUs} µs, Redis ` +
      `${row.perAccepted.redisUs} µs (masters ${row.redisUsByRole.masters}, replicas ${row.redisUsByRole.replicas}); ` +
      `WAIT calls ${waitCalls} (${row.waitCallsPerPurchase} per purchase)`,
  );
  return row;
}
