/**
 * One autocannon run against the API or the ceiling server, with what it cost: latencies, statuses,
 * CPU per process and Redis command time.
 */
import { performance } from 'node:perf_hooks';
import { require } from './app-dist.mjs';
import { formatCpu, formatRedis, round } from './format.mjs';
import {
  cpuPerResponse,
  diffCommandStats,
  latencySummary,
  redisCommandStats,
  scriptAndTotalTime,
} from './sampling.mjs';
import { watchConnects } from './connect-times.mjs';
import { startHeapMeter } from './process-probes.mjs';
import { SETTINGS, log } from './settings.mjs';
import { state } from './stack.mjs';

/**
 * `load(options)` runs against the API (`target: 'api'`) or the ceiling server. Every request takes the
 * next prepared pair (setupRequest is called once per request sent, plus once per connection up
 * front) and sends the same headers and body to either target: the API reads the user from the JWT,
 * the ceiling from `x-user-id`. Latencies and statuses are recorded from the 'response' event so p95
 * can be reported (autocannon's own histogram has no p95).
 *
 * `settle(statuses)`, when given, runs after the last response and waits until the work the accepted
 * purchases left behind is done (the worker writing their orders). The costs per response (CPU µs,
 * Redis µs) run until then, so a purchase costs everything it caused, however far the worker lagged;
 * req/s, latencies and the CPU shares (% of a core) are those of the load window alone.
 *
 * Another stack than the bench's main one (the scale section's) passes `baseUrl`, `pids` (its API's,
 * its worker's, its Redis's: name -> pid or list of pids, see cpuSampler) and `redisNodes` (a client
 * per Redis server, whose `INFO commandstats` are summed; `redisCommandsByNode` then keeps each one's).
 */
export function loadRunner({ cpu, baseUrl, ceilingUrl }) {
  const autocannon = require('autocannon');
  return async function load({
    key,
    label,
    target = 'api',
    saleId,
    pairs,
    expect,
    durationS,
    amount,
    settle,
    connections = SETTINGS.connections,
    baseUrl: apiUrl = baseUrl,
    pids,
    redisNodes,
    method = 'POST',
    path,
  }) {
    const url = target === 'ceiling' ? ceilingUrl : apiUrl;
    const requestPath = path ?? (target === 'ceiling' ? '/purchase' : `/api/sales/${saleId}/purchase`);
    // The main stack's API (another stack passes its own pids) and the ceiling server have the heap meter.
    const metered = target === 'ceiling' ? state.ceiling : !pids && state.api;
    const heapMeter = metered ? await startHeapMeter(metered) : undefined;
    const connects = watchConnects(Number(new URL(url).port));
    const traffic = startTraffic(autocannon, { url, method, requestPath, pairs, durationS, amount, connections });
    const cost = startCostWindow(cpu, target, pids);
    const nodes = redisNodes ?? [{ name: 'redis', client: state.redis }];
    const redisBefore = await commandStatsByNode(nodes);
    const mysqlBefore = await mysqlQuestions();
    state.loadRun = traffic.instance;
    const startedAt = performance.now();
    const result = await traffic.instance;
    state.loadRun = undefined;
    const loadWindow = cost.until();
    const connect = connects.stop();
    const serverHeap = heapMeter && (await heapMeter.stop());
    const settled = settle ? await settle(traffic.statuses) : undefined;
    const costs = settled ? cost.until() : loadWindow;
    const redisAfter = await commandStatsByNode(nodes);
    const mysqlAfter = await mysqlQuestions();
    const responses = traffic.latencies.length;
    const redisCommands = diffCommandStats(sumStats(redisBefore), sumStats(redisAfter), responses);
    // Server-wide: the worker's periodic work and these two reads are in it (a few statements a second).
    const mysqlQueries = {
      total: mysqlAfter - mysqlBefore,
      perResponse: round((mysqlAfter - mysqlBefore) / responses, 3),
    };
    const run = { key, label, target, pairs, expect, amount, result, startedAt, traffic, settled, connections };
    const summary = summarize(run, { cpu: loadWindow.cpu, costs, redisCommands, mysqlQueries });
    summary.connect = connect;
    if (serverHeap) summary.serverHeap = heapSummary(serverHeap, responses, loadWindow);
    if (redisNodes)
      summary.redisCommandsByNode = nodes.map(({ name }, i) => ({
        node: name,
        ...scriptAndTotalTime(redisBefore[i], redisAfter[i]),
      }));
    logSummary(summary, [expect].flat(), result);
    return summary;
  };
}

/** autocannon, each request with the next pair; records every response's status and latency. */
function startTraffic(autocannon, { url, method, requestPath, pairs, durationS, amount, connections }) {
  const traffic = { latencies: [], statuses: {}, sent: 0, lastResponseAt: 0 };
  traffic.instance = autocannon({
    url,
    connections,
    ...(amount ? { amount } : { duration: durationS }),
    timeout: 10,
    requests: [
      {
        method,
        path: requestPath,
        setupRequest(request) {
          const i = traffic.sent++ % pairs.count; // wraps only if BENCH_USERS is too small (reported)
          request.headers = { authorization: pairs.auth[i], 'x-user-id': pairs.user[i] };
          if (method === 'POST') {
            request.headers['content-type'] = 'application/json';
            request.body = pairs.body[i];
          }
          return request;
        },
      },
    ],
  });
  traffic.instance.on('response', (_client, status, _bytes, ms) => {
    traffic.lastResponseAt = performance.now();
    traffic.latencies.push(ms);
    traffic.statuses[status] = (traffic.statuses[status] ?? 0) + 1;
  });
  return traffic;
}

/**
 * CPU from now on. `until()` gives the shares in whole percents (what the report shows) and, from
 * (nearly) unrounded shares, the window's length for the costs: whole percents would be off by tens
 * of µs per response on short runs.
 */
function startCostWindow(cpu, target, pids) {
  const startedAt = performance.now();
  const before = cpu.snapshot(pids ?? { api: state.api.pid, worker: state.workerPid, ceiling: state.ceiling?.pid });
  return {
    until: () => ({
      cpu: cpu.since(before),
      precise: cpu.since(before, { digits: 3 }),
      seconds: (performance.now() - startedAt) / 1000,
      target,
    }),
  };
}

/** `INFO commandstats` of each Redis server, read at about the same instant. */
const commandStatsByNode = (nodes) => Promise.all(nodes.map(({ client }) => redisCommandStats(client)));

/** Several servers' command stats as if one server had run every command. */
function sumStats(statsByNode) {
  const sum = {};
  for (const stats of statsByNode)
    for (const [command, { calls, usec }] of Object.entries(stats)) {
      sum[command] ??= { calls: 0, usec: 0 };
      sum[command].calls += calls;
      sum[command].usec += usec;
    }
  return sum;
}

/** Statements MariaDB has run for its clients so far (`Questions`, server-wide). */
async function mysqlQuestions() {
  const [rows] = await state.mysql.query("SHOW GLOBAL STATUS LIKE 'Questions'");
  return Number(rows[0]?.Value ?? 0);
}

function summarize(run, { cpu, costs, redisCommands, mysqlQueries }) {
  const { result, traffic, pairs, amount, startedAt, settled } = run;
  const expected = [run.expect].flat();
  const completed = traffic.latencies.length;
  const unexpected = completed - expected.reduce((sum, status) => sum + (traffic.statuses[status] ?? 0), 0);
  const elapsedS = (traffic.lastResponseAt - startedAt) / 1000;
  return {
    key: run.key,
    scenario: run.label,
    target: run.target,
    connections: run.connections,
    durationS: result.duration,
    requests: completed,
    // A timed run: autocannon's mean of its per-second samples. A fixed-count run: our own clock,
    // because autocannon notices the last response only at its next 1 s sample tick, which rounds
    // the duration up to whole seconds.
    reqPerSec: amount ? round(completed / elapsedS) : round(result.requests.average),
    reqPerSecBasis: amount ? 'responses / (last response - start)' : 'autocannon mean of 1 s samples',
    elapsedToLastResponseS: round(elapsedS, 2),
    reqPerSecOverall: round(completed / result.duration),
    latencyMs: latencySummary(traffic.latencies),
    expectedStatus: expected.length === 1 ? expected[0] : expected,
    statusCounts: traffic.statuses,
    unexpectedStatuses: unexpected,
    socketErrors: result.errors,
    timeouts: result.timeouts,
    errors: unexpected + result.errors,
    pairsPrepared: pairs.count,
    pairsUsed: Math.min(traffic.sent, pairs.count),
    pairsReused: Math.max(0, traffic.sent - pairs.count),
    cpu,
    // Until `settle` returned: includes writing the orders of this run's accepted purchases.
    ...(settled && { settled, cpuUntilSettled: costs.precise }),
    cpuUsPerResponse: cpuPerResponse(costs.precise, costs.seconds, completed, costs.target),
    redisCommands,
    mysqlQueries,
  };
}

function logSummary(summary, expected, result) {
  const { scenario: label, latencyMs, statusCounts } = summary;
  log(
    `${label}: ${summary.reqPerSec} req/s, p50 ${latencyMs.p50} p95 ${latencyMs.p95} ` +
      `p99 ${latencyMs.p99} ms, ${summary.requests} responses ${JSON.stringify(statusCounts)}, ` +
      `socket errors ${result.errors}, timeouts ${result.timeouts}`,
  );
  log(`${label}: CPU ${formatCpu(summary.cpu)}`);
  log(`${label}: Redis ${formatRedis(summary.redisCommands)}`);
  if (summary.settled) log(`${label}: ${JSON.stringify(summary.settled)}`);
  if (summary.serverHeap) {
    const { kbPerResponse, collections, gcMs, gcShareOfServerCpu } = summary.serverHeap;
    log(
      `${label}: server heap ${kbPerResponse} KB allocated per response; ${collections} collections, ` +
        `${gcMs} ms = ${round((gcShareOfServerCpu ?? 0) * 100, 1)} % of its CPU`,
    );
  }
  const { connections, p50, p99, max, kernel } = summary.connect;
  log(
    `${label}: ${connections} connections opened, connect p50 ${p50} p99 ${p99} max ${max} ms; kernel: ` +
      `listen overflows ${kernel.listenOverflows}, listen drops ${kernel.listenDrops}, SYN retransmits ${kernel.synRetransmits}`,
  );
  if (summary.pairsReused > 0)
    log(`WARNING ${label}: ${summary.pairsReused} requests reused a pair; raise BENCH_USERS`);
  if (summary.errors > 0)
    log(
      `WARNING ${label}: ${summary.unexpectedStatuses} responses were not ${expected.join('/')}, ${result.errors} socket errors`,
    );
}

/**
 * The server's (the API's or the ceiling's) heap allocations per response over the load window, and its
 * garbage collection: pause time and its share of the server's CPU meanwhile.
 */
function heapSummary({ allocatedBytes, collections, gcMicros }, responses, loadWindow) {
  const server = loadWindow.target === 'ceiling' ? 'ceiling' : 'api';
  const serverCpuMicros = ((loadWindow.precise[server] ?? 0) / 100) * loadWindow.seconds * 1e6;
  return {
    allocatedBytes,
    kbPerResponse: responses ? round(allocatedBytes / responses / 1024, 2) : null,
    collections,
    gcMs: round(gcMicros / 1000, 0),
    gcShareOfServerCpu: serverCpuMicros ? round(gcMicros / serverCpuMicros, 3) : null,
  };
}
