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

export async function runScale(run) {
  run.results.scale = {
    processes: await measureApiProcesses(run),
    cluster: await measureClusterBuckets(run),
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
// Redis Cluster, one hot sale over K buckets

async function measureClusterBuckets(run) {
  log(`scale: starting a ${CLUSTER_MASTERS}-master Redis Cluster`);
  state.redisCluster = await startRedisCluster({
    masters: CLUSTER_MASTERS,
    dir: path.join(TMP, 'redis-cluster'),
    // Under the bench's load a master may stall past the tests' 2 s; with no replica it would only fail.
    nodeTimeoutMs: 5_000,
    onUnexpectedExit: childDied,
  });
  const nodes = await clusterNodes(state.redisCluster);
  const database = createExtraDatabase('cluster');
  const port = await freePort();
  const env = {
    ...run.appEnv,
    PORT: String(port),
    DATABASE_URL: database.url,
    REDIS_CLUSTER_NODES: nodes.map((node) => node.address).join(','),
    WORKER_METRICS_PORT: String(await freePort()),
  };
  const api = startChild('api-cluster', APP_DIST.api, env);
  const worker = startChild('worker-cluster', APP_DIST.worker, env);
  const baseUrl = `http://127.0.0.1:${port}`;
  const { createRedisClient } = require('@flash-sale/redis');
  const cluster = createRedisClient({ url: run.redisUrl, clusterNodes: env.REDIS_CLUSTER_NODES.split(',') });
  try {
    await waitForHttp(`${baseUrl}/api/sales`, api);
    await waitForLog(worker, 'Worker consuming');
    log(`scale: cluster stack up (API ${baseUrl} pid ${api.pid}, worker pid ${worker.pid}, database ${database.name})`);
    const sales = await adminSales(httpClient(baseUrl));
    const target = {
      baseUrl,
      pids: { api: api.pid, worker: worker.pid, redis: nodes.map((node) => node.pid) },
      redisNodes: nodes.map((node) => ({ name: node.address, client: node.client })),
      worker,
      database: database.name,
      redis: cluster,
    };
    const rows = [];
    for (const buckets of [1, SETTINGS.scaleBuckets])
      rows.push(await measureBuckets(run, { sales, target, nodes, cluster, buckets }));
    return {
      masters: nodes.map(({ address, slots }) => ({ address, slots })),
      rows,
      busiestShareTarget: BUSIEST_MASTER_SCRIPT_SHARE,
    };
  } finally {
    cluster.disconnect();
    for (const node of nodes) node.client.disconnect();
    await Promise.all([stopChild(api), stopChild(worker)]);
    await state.redisCluster.stop();
    state.redisCluster = undefined;
  }
}

/** Each master's address, pid, slot ranges (`first-last, …`) and a plain client of its own (INFO, KEYSLOT). */
async function clusterNodes(redisCluster) {
  const { Redis } = require('ioredis');
  const topology = await redisCluster.topology();
  return redisCluster.ports.map((port) => ({
    address: `127.0.0.1:${port}`,
    pid: redisCluster.pid(port),
    slots: (topology.find((node) => node.port === port)?.slots ?? [])
      .map(([first, last]) => (first === last ? `${first}` : `${first}-${last}`))
      .join(', '),
    client: new Redis(port, '127.0.0.1', { maxRetriesPerRequest: 1 }),
  }));
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
