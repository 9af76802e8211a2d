/** bench/results/latest.md, also printed at the end of a run: one section per scenario. */
import { formatCpu, formatIdleRedis, formatRedis, percent, thousands, times } from '../format.mjs';
import { NOISY_OTHER_PERCENT } from '../settings.mjs';
import { createSaleSection } from './create-sale.mjs';
import { openingSection } from './opening.mjs';
import { scaleSection } from './scale.mjs';
import { TARGETS, targetVerdict } from './targets.mjs';

const latencies = (s) => `${s.latencyMs.p50} | ${s.latencyMs.p95} | ${s.latencyMs.p99}`;
const errors = (s) => `${s.errors}${s.timeouts ? ` (+${s.timeouts} timeouts)` : ''}`;

export function renderMarkdown(r) {
  const lines = [
    ...header(r),
    ...targetsSection(r),
    ...endpointSection(r),
    ...strategySection(r),
    ...createSaleSection(r),
    ...openingSection(r),
    ...scaleSection(r),
    ...cpuPerResponseSection(r),
    ...cpuAndRedisSection(r),
    drainParagraph(r),
    '',
    ...idleSection(r),
    ...closingLines(r),
    ...(r.profiles ?? []).flatMap(profileSection),
  ];
  return `${lines.join('\n')}\n`;
}

function header(r) {
  const m = r.machine;
  return [
    `# Purchase benchmark — ${r.finishedAt}`,
    '',
    `Machine: ${m.cpuModel} × ${m.cpuCount}, ${m.totalMemoryGiB} GiB RAM, Node ${m.node}, ${m.platform}; ` +
      `load average at start ${m.loadAverageAtStart.join(' / ')}. App commit ${r.app.commit}` +
      (r.app.uncommittedAppFiles ? ` + ${r.app.uncommittedAppFiles} uncommitted files under apps/ libs/` : '') +
      ` ("${r.app.commitSubject}"), dist built ${r.app.distBuiltAt}.`,
    `Load generator, API, worker, Redis and MariaDB all on this machine. ${r.settings.connections} connections, ` +
      `${r.settings.durationS} s per timed scenario after a ${r.settings.warmupS} s warm-up; each request a distinct ` +
      `(user, submit token) pair.`,
    `CPU used by other processes (not this run's) during the measurements: mean ` +
      `${r.noise.otherProcessesPercentOfOneCore.mean} %, max ${r.noise.otherProcessesPercentOfOneCore.max} % of one ` +
      `core${r.noise.noisy ? ` — **noisy run: above ${NOISY_OTHER_PERCENT} %, compare with care**` : ''}.`,
    ...calibrationLine(r),
    '',
    `![req/s, p99 latency, oversold units and drain rate per scenario](${r.chart.svg})` +
      (r.chart.png ? ` ([PNG](${r.chart.png}))` : ''),
    '',
  ];
}

function targetsSection(r) {
  return [
    '## Targets',
    '',
    '| target | measured | result |',
    '|---|---|---|',
    ...r.targets.map((t) => `| ${t.name} | ${t.measured} | **${targetVerdict(t)}** |`),
    '',
  ];
}

function endpointSection(r) {
  return [
    '## (a) ceiling, (b) purchase endpoint, (c) drain',
    '',
    '| scenario | req/s | vs ceiling | p50 (ms) | p95 (ms) | p99 (ms) | Redis commands / response | Redis µs / response | Redis vs ceiling | MySQL queries / response | machine CPU µs / response | CPU vs ceiling | errors |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...r.scenarios.map(
      (s) =>
        `| ${s.scenario} | ${thousands(s.reqPerSec)} | ${percent(s.vsCeiling)} | ${latencies(s)} | ` +
        `${s.redisCommands.callsPerResponse} | ${s.redisCommands.usecPerResponse} | ${times(s.redisVsCeiling)} | ` +
        `${s.mysqlQueries?.perResponse ?? ''} | ${thousands(s.cpuUsPerResponse.machine)} | ` +
        `${times(s.machineCpuVsCeiling)} | ${errors(s)} |`,
    ),
    `| drain into MySQL (${r.drain.rows} unwritten orders, fresh worker), per order | ` +
      `**${thousands(r.drain.ordersPerSec)} orders/s** (${times(r.ratios.drainVsBaseline)} the previous build's ` +
      `${thousands(r.settings.drainBaseline)}) | | | | | ${r.drain.redisCommands.callsPerResponse} | ${r.drain.redisCommands.usecPerResponse} | | | ` +
      `${thousands(r.drain.cpuUsPerOrder.machine)} | | audit ok ${r.drain.audit.ok} |`,
    '',
    `The ceiling is \`bench/ceiling-server.mjs\`: bare Fastify + ioredis running the app's reservation script ` +
      'through its `ReservationScripts` (no JWT, validation, queue or logging), its own child process, same ' +
      'connections and the same kind of (user, token) pairs; the API and worker sit idle meanwhile. ' +
      'Redis commands and µs = server-wide `INFO commandstats` calls and time per response; MySQL queries = ' +
      "MariaDB's server-wide `Questions` per response (the worker's periodic statements included). " +
      'Machine CPU µs = CPU time per response of ' +
      'the server and Redis for the ceiling, of the API, the worker, Redis and MariaDB for the app (never the load ' +
      "generator). Both run until the worker has written the scenario's accepted orders (live sale, redis-lua " +
      'strategy), so a purchase costs everything it caused. The cost targets divide by accepted purchases ' +
      `(live: ${r.livePerAcceptedPurchase.accepted}). ` +
      `errors = answers other than the expected status + socket errors. "purchase, worker stopped" is the ` +
      `${r.settings.drainOrders} purchases left unwritten for the drain (a fixed count, not a duration; its ` +
      'writing is in the drain row).',
    '',
  ];
}

function strategySection(r) {
  return [
    `## (d) strategies — stock ${r.settings.strategyStock}, ${r.settings.strategyBuyers} distinct buyers each, ` +
      `${r.settings.connections} connections, one after another`,
    '',
    '| strategy | req/s | vs ceiling | p50 (ms) | p95 (ms) | p99 (ms) | accepted | refused 410 | other answers | held | oversold | audit ok |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...r.strategies.map(strategyRow),
    '',
    `req/s of a fixed-count run = responses / (last response − start). Each strategy first gets a ` +
      `${Math.max(r.settings.strategyWarmup, r.settings.connections)}-request warm-up on a throwaway sale of its own. redis-lua answers 202 and ` +
      'its orders are written by the worker before the audit; the others write the order in the request (201). ' +
      '`naive-unsafe` reads `available`, checks, and writes back what it read minus one, with no lock: it is ' +
      'meant to oversell, and the audit shows by how much. `redis-lock-unfenced` does the same under a Redis ' +
      'lock without a fencing token: it oversells only when a lock holder pauses past the lock’s TTL, which ' +
      'the bench never does (`npm run demo -- --pause-lock-holder` does), so here it shows what the fence costs. ' +
      '"Other answers" are mostly 503 + retry-after (retries ran out, or the lock could not be had): a "try ' +
      'again", never an oversell.',
    '',
  ];
}

function strategyRow(s) {
  const other = s.requests - s.accepted - s.refusedSoldOut + s.socketErrors;
  const name = s.unsafe ? `**${s.strategy} — UNSAFE**` : s.strategy;
  const oversold = s.unsafe ? `**${s.audit.oversold}**` : s.audit.oversold;
  return (
    `| ${name} (${s.acceptedStatus}) | ${thousands(s.reqPerSec)} | ${percent(s.vsCeiling)} | ${latencies(s)} | ${s.accepted} | ` +
    `${s.refusedSoldOut} | ${other}${s.timeouts ? ` (+${s.timeouts} timeouts)` : ''} | ${s.audit.held} | ${oversold} | ${s.audit.ok} |`
  );
}

function cpuPerResponseSection(r) {
  const cell = (v) => (v === undefined || v === null ? '' : thousands(v));
  return [
    '**CPU time per response** (µs, from `/proc`; the server is the API or the ceiling; less sensitive to ' +
      'other load on the machine than req/s)',
    '',
    '| scenario | server | worker | Redis | MariaDB | machine | load generator | total |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
    ...[...r.scenarios, ...r.strategies].map((s) => {
      const c = s.cpuUsPerResponse;
      return `| ${s.scenario} | ${cell(s.target === 'ceiling' ? c.ceiling : c.api)} | ${cell(c.worker)} | ${cell(c.redis)} | ${cell(c.mysql)} | ${cell(c.machine)} | ${cell(c.loadGenerator)} | ${cell(c.total)} |`;
    }),
    '',
  ];
}

function cpuAndRedisSection(r) {
  const rows = [...r.scenarios, ...r.strategies];
  return [
    '**CPU during each scenario** (per process: % of one core; machine busy and steal: % of all cores)',
    '',
    ...rows.map((s) => `- ${s.scenario}: ${formatCpu(s.cpu)}`),
    `- drain: ${formatCpu(r.drain.cpu)}`,
    '',
    '**Redis command time per scenario** (server-wide `INFO commandstats` deltas; EVALSHA covers both the',
    "reservation script and BullMQ's scripts, including the worker's)",
    '',
    ...rows.map((s) => `- ${s.scenario}: ${formatRedis(s.redisCommands)}`),
    '',
  ];
}

function drainParagraph(r) {
  const d = r.drain;
  return (
    `**Drain rate**: ${d.rows} orders written at **${d.ordersPerSec} orders/s** ` +
    `(first → last order row ${d.firstToLastS} s, polled every ${d.pollIntervalMs} ms; ` +
    `by the rows' created_at ${d.ordersPerSecByRowTimestamps} orders/s; worker start → first row ` +
    `${d.workerBootToFirstRowS} s). MySQL transactions ≈ ${d.mysqlTransactions.commits} commits ` +
    `(+${d.mysqlTransactions.rollbacks} rollbacks, server-wide counters) ≈ ${d.ordersPerTransaction} ` +
    `orders per transaction. CPU per order (worker start → last row, boot included): worker ` +
    `${d.cpuUsPerOrder.worker} µs, Redis ${d.cpuUsPerOrder.redis} µs, MariaDB ` +
    `${d.cpuUsPerOrder.mysql} µs. Audit: ok = **${d.audit.ok}** (oversold ${d.audit.oversold}, ` +
    `duplicates ${d.audit.duplicateOrders}, lost ${d.audit.lostReservations}). Redis: ` +
    `${formatRedis(d.redisCommands, 'order')}.`
  );
}

function idleSection(r) {
  const idle = r.idle;
  return [
    `## (e) idle worker, ${idle.sales} live sold-out sales`,
    '',
    `${idle.sales} redis-lua sales of stock ${idle.stockEach}, open for the whole measurement, each sold out through ` +
      `the API (${idle.ordersWritten} purchases, all written ${idle.ordersWrittenAfterS} s after the last one), ` +
      `then ${idle.durationS} s with no load at all (the run's earlier sales are still open too).`,
    '',
    '| process | % of one core |',
    '|---|---:|',
    `| **worker** (target < ${TARGETS.idleWorkerPercentOfCore} %) | **${idle.cpu.worker}** |`,
    `| API | ${idle.cpu.api} |`,
    `| Redis (shared server: other clients count too) | ${idle.cpu.redis} |`,
    `| MariaDB (shared server) | ${idle.cpu.mysql} |`,
    `| other processes (not this run's) | ${idle.cpu.otherProcesses} |`,
    '',
    `Redis meanwhile: ${formatIdleRedis(idle)}.`,
    '',
  ];
}

function closingLines(r) {
  const live = r.scenarios.find((s) => s.key === 'live');
  const statusList = (counts) =>
    Object.entries(counts)
      .map(([status, n]) => `${n}×${status}`)
      .join(', ');
  return [
    `Live sale: ${live.settled.unwrittenAtWaitStart} of its orders were unwritten when the load ended, all written ` +
      `${live.settled.writtenAfterS} s later. Audits: live ok = ${r.audits.live.ok}, ` +
      `sold-out ok = ${r.audits.soldOut.ok}. Strategy answers: ` +
      r.strategies.map((s) => `${s.strategy} ${statusList(s.statusCounts)}`).join('; ') +
      '.',
    '',
    `Checks: ${r.checks.map((c) => `${c.pass ? 'PASS' : 'FAIL'} ${c.name}`).join('; ')}.`,
  ];
}

function profileSection(p) {
  return [
    '',
    `**${p.title}** (${p.busyMs} ms busy, ${p.idleMs} ms idle; ${p.file})`,
    '',
    '| top self time | % |',
    '|---|---:|',
    ...p.topSelf.map((row) => `| \`${row.name}\` | ${row.percent} |`),
    '',
    '| on the stack (inclusive) | % |',
    '|---|---:|',
    ...p.packagesInclusive.map((row) => `| ${row.name} | ${row.percent} |`),
    ...(p.allocationsTop
      ? [
          '',
          '| heap allocations by function (sampled) | % of bytes |',
          '|---|---:|',
          ...p.allocationsTop.byFunction.map((row) => `| \`${row.name}\` | ${row.percent} |`),
          '',
          '| heap allocations by package (Node core: its caller) | % of bytes |',
          '|---|---:|',
          ...p.allocationsTop.byPackage.map((row) => `| ${row.name} | ${row.percent} |`),
        ]
      : []),
  ];
}

/**
 * The speed probe of each server process before it was measured (lib/process-probes.mjs): its time at a
 * fixed piece of work over the bench's own; one found slow was restarted, and one still slow flags the run.
 */
function calibrationLine(r) {
  if (!r.calibration?.length) return [];
  const slow = r.calibration.filter((c) => c.slow).map((c) => c.process);
  return [
    `Speed probe before measuring (a process's time at a fixed piece of work over the bench's own): ` +
      r.calibration
        .map((c) => `${c.process} ${c.ratios.map((ratio) => `${ratio}×`).join(', restarted, then ')}`)
        .join('; ') +
      (slow.length
        ? ` — **${slow.join(' and ')} ran at part speed even after a restart: its targets are not the build's**.`
        : '.'),
  ];
}
