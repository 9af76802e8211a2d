#!/usr/bin/env node
/**
 * The waiting room's crowd at full size: 20,000 buyers on one sale with a waiting room, driven from one
 * Node process against a running API — more than k6 fits on a 2-core machine at one VU per buyer. Each
 * buyer is load-tests/lib/room-buyer.ts's state machine on timers (join, poll when `pollAfterMs` says,
 * token with its pass, buy; a few probe the token route), over kept-alive undici pools; the run is
 * judged by load-tests/lib/waiting-room.ts, the very functions the k6 scenario judges with (compiled on
 * the fly by esbuild), then audited.
 *
 *   npm run start:load                        # the API, with the load-test sign-in profile
 *   npm run room-crowd                        # 20,000 buyers: 15,000 before the opening, 5,000 after
 *   BUYERS=5000 EARLY_BUYERS=4000 npm run room-crowd
 *
 * Environment (bench/README.md "The waiting room's crowd"): BASE_URL, ADMIN_PASSWORD, BUYERS, EARLY_BUYERS,
 * START_DELAY, LATE_SECONDS, STOCK, ADMIT_PER_SECOND, MAX_SHOPPING, PROBE_EVERY, MAX_WAIT, CONNECTIONS,
 * P95_MS, ETA_ERROR_P90, STRATEGY. Exits 0 when both verdicts pass, 1 otherwise; writes
 * bench/results/room-crowd.json (figures, verdicts, the room sampled once a second) and
 * room-crowd-buyers.json (every buyer's record).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseCommandLine } from '../scripts/lib/cli.mjs';
import { answeringPid } from '../scripts/lib/probes.mjs';
import { ROOT } from './lib/app-dist.mjs';
import { importLoadTestsLib } from './lib/load-tests-lib.mjs';
import { crowdHttp } from './lib/room-crowd/http.mjs';
import { childPids, cpuSampler } from './lib/sampling.mjs';

// Configured by its environment alone: an argument is a mistake worth one line, `--help` says which variables.
parseCommandLine({
  name: 'room-crowd',
  usage:
    'Usage: [VARIABLE=value …] npm run room-crowd   (bench/README.md "The waiting room\'s crowd")\n' +
    'Variables: BASE_URL, ADMIN_PASSWORD, BUYERS, EARLY_BUYERS, START_DELAY, LATE_SECONDS, STOCK, ADMIT_PER_SECOND,\n' +
    '  MAX_SHOPPING, PROBE_EVERY, MAX_WAIT, CONNECTIONS, P95_MS, ETA_ERROR_P90, STRATEGY',
  options: {},
});

function setting(name, fallback, { min = 0, integer = true } = {}) {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min || (integer && !Number.isInteger(value))) {
    throw new Error(`${name} must be ${integer ? 'an integer' : 'a number'} ≥ ${min}, got "${raw}"`);
  }
  return value;
}

const BASE_URL = (process.env.BASE_URL || 'http://localhost:3000').replace(/\/+$/, '');
const ADMIN_PASSWORD = process.env.ADMIN_PASSWORD || 'admin';
const BUYERS = setting('BUYERS', 20_000, { min: 1 });
const EARLY = Math.min(BUYERS, setting('EARLY_BUYERS', Math.round(BUYERS * 0.75)));
const LATE = BUYERS - EARLY;
/** Seconds from the sale's creation (every buyer signed in) to its opening: the crowd joins meanwhile. */
const START_DELAY = setting('START_DELAY', 30, { min: 5 });
const LATE_SECONDS = setting('LATE_SECONDS', 30, { min: 1 });
const STOCK = setting('STOCK', 2_000, { min: 1 });
const ADMIT_PER_SECOND = setting('ADMIT_PER_SECOND', 200, { min: 1 });
const MAX_SHOPPING = setting('MAX_SHOPPING', 300, { min: 1 });
const PROBE_EVERY = setting('PROBE_EVERY', 100, { min: 1 });
const MAX_WAIT = setting('MAX_WAIT', 120, { min: 10 });
const CONNECTIONS = setting('CONNECTIONS', 1024, { min: 1 });
const P95_MS = setting('P95_MS', 500, { min: 1 });
const ETA_ERROR_P90 = setting('ETA_ERROR_P90', undefined, { min: 1, integer: false });
const STRATEGY = process.env.STRATEGY || 'redis-lua';
/** As load-tests/lib/flows.ts's RETRY_LATER_SECONDS: how long a "retry later" token or purchase is sent again. */
const RETRY_LATER_MS = 15_000;

const lib = await importLoadTestsLib([
  'answer-shapes.ts',
  'room-answers.ts',
  'room-buyer.ts',
  'waiting-room.ts',
  'room-words.ts',
  'room-verdict.ts',
]);
const http = crowdHttp(BASE_URL, { connections: CONNECTIONS, buyConnections: 64, readAnswer: lib.readAnswer });
const log = (line) => console.log(`[room-crowd] ${line}`);

/** The API's processes (each `GET /health` on a fresh connection names the one that answered), for CPU. */
async function apiPids() {
  const seen = new Set();
  for (let i = 0; i < 12; i++) seen.add(await answeringPid(`${BASE_URL}/health`));
  const pids = [...seen].filter(Boolean);
  if (pids.length === 0) return [];
  try {
    // Several API processes on one port (`npm start`): the cluster's primary and all its workers.
    const stat = readFileSync(`/proc/${pids[0]}/stat`, 'utf8');
    const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    const cmdline = readFileSync(`/proc/${parent}/cmdline`, 'utf8');
    if (cmdline.includes('cluster')) return [parent, ...childPids(parent)];
  } catch {
    return []; // not on this machine (or not Linux): no CPU figures
  }
  return pids;
}

/** Runs `task(i)` for 0..count-1, `parallel` at a time. */
async function pool(count, parallel, task) {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(parallel, count) }, async () => {
      while (next < count) await task(next++);
    }),
  );
}

async function signIn(runId) {
  const started = Date.now();
  const sessions = new Array(BUYERS);
  let refused = 0;
  await pool(BUYERS, CONNECTIONS, async (i) => {
    const answer = await http.call('POST', '/api/auth/guest', { json: { name: `room-${runId}-${i}` } });
    if (answer.status === 201 && answer.body?.token) sessions[i] = answer.body.token;
    else refused++;
  });
  if (refused > 0) {
    throw new Error(
      `${refused} of ${BUYERS} guest sign-ins refused: start the API with RATE_LIMIT_PROFILE=load-test (npm run start:load)`,
    );
  }
  log(`${lib.n(BUYERS)} buyers signed in in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return sessions;
}

/** Every second, the room as the admin sees it; every 5 s, a progress line. */
function sampleRoom(admin, saleId, buyers, opensAt) {
  const samples = [];
  let stopped = false;
  let lastPolls = 0;
  let lastAt = Date.now();
  const done = (async () => {
    for (let tick = 0; !stopped; tick++) {
      const answer = await http.call('GET', `/api/admin/sales/${saleId}/queue`, { token: admin, pool: 'admin' });
      const at = Date.now();
      if (answer.status === 200) samples.push({ atS: Math.round((at - opensAt) / 100) / 10, ...answer.body });
      if (tick % 5 === 0) {
        let polls = 0;
        let bought = 0;
        let told = 0;
        for (const b of buyers) {
          polls += b.polls;
          if (b.outcome === 'bought') bought++;
          if (b.toldSoldOutAt !== undefined) told++;
        }
        const perSecond = ((polls - lastPolls) * 1000) / Math.max(1, at - lastAt);
        lastPolls = polls;
        lastAt = at;
        const s = answer.body ?? {};
        log(
          `${((at - opensAt) / 1000).toFixed(0).padStart(4)} s: waiting ${lib.n(s.waiting)}, admitted ${lib.n(s.admitted)}, ` +
            `shopping ${lib.n(s.shopping)}, measured ${s.measuredAdmitPerSecond ?? '—'}/s; polls ${lib.n(perSecond)}/s; ` +
            `bought ${lib.n(bought)}, told sold out ${lib.n(told)}; load ${loadavg()[0].toFixed(1)}`,
        );
      }
      await sleep(1000 - ((Date.now() - at) % 1000));
    }
  })();
  return {
    samples,
    stop: async () => {
      stopped = true;
      await done;
    },
  };
}

/** One buyer, from its arrival until it is done (or the deadline). */
async function drive(buyer, plan, sessions, deadline, tally) {
  while (buyer.next && Date.now() < deadline) {
    const wait = buyer.next.at - Date.now();
    if (wait > 0) await sleep(wait);
    const request = lib.requestFor(buyer, plan);
    const answer = await http.call(request.method, request.path, {
      token: sessions[request.as],
      json: request.json,
      pool: request.endpoint === 'token' || request.endpoint === 'purchase' ? 'buying' : 'crowd',
    });
    (tally.latency[request.endpoint] ??= []).push(answer.answeredAt - answer.sentAt);
    const event = lib.advance(buyer, answer, plan);
    if (event?.kind === 'unexpected') {
      const key = `${event.endpoint} ${event.status} ${event.code}`.trim();
      tally.unexpected[key] = (tally.unexpected[key] ?? 0) + 1;
    }
    tally.requests++;
  }
}

async function auditWhenQuiet(admin, saleId) {
  const until = Date.now() + 120_000;
  for (;;) {
    const audit = await http.must('GET', `/api/admin/sales/${saleId}/audit`, 200, { token: admin, pool: 'admin' });
    const drained = audit.ordersByStatus?.QUEUED === 0;
    if (drained || Date.now() > until) return { ...audit, drained };
    await sleep(500);
  }
}

async function main() {
  const runId = Date.now().toString(36);
  const admin = (await http.must('POST', '/api/auth/admin', 201, { json: { password: ADMIN_PASSWORD } })).token;
  const pids = await apiPids();
  log(
    `${lib.n(BUYERS)} buyers (${lib.n(EARLY)} before the opening, ${lib.n(LATE)} over ${LATE_SECONDS} s after) ` +
      `against ${BASE_URL}; ${cpus().length} cores, load ${loadavg()[0].toFixed(1)}`,
  );
  const sessions = await signIn(runId);

  const startsAt = new Date(Date.now() + START_DELAY * 1000);
  const sale = await http.must('POST', '/api/admin/sales', 201, {
    token: admin,
    json: {
      name: `room crowd ${runId}`,
      description: `npm run room-crowd: ${BUYERS} buyers, ${STOCK} units`,
      priceCents: 4999,
      stock: STOCK,
      perUserLimit: 1,
      strategy: STRATEGY,
      startsAt: startsAt.toISOString(),
      endsAt: new Date(startsAt.getTime() + 3_600_000).toISOString(),
      purpose: 'bench',
      waitingRoom: { admitPerSecond: ADMIT_PER_SECOND, maxShopping: MAX_SHOPPING },
    },
  });
  const opensAt = Date.parse(sale.startsAt);
  log(
    `sale ${sale.id} (${STRATEGY}, stock ${lib.n(STOCK)}, room ${ADMIT_PER_SECOND}/s under ${MAX_SHOPPING} shopping) ` +
      `opens at ${sale.startsAt}`,
  );

  const buyers = lib.arriveCrowd({
    from: Date.now(),
    early: EARLY,
    earlyUntil: opensAt - 3000,
    opensAt,
    late: LATE,
    lateRate: LATE / LATE_SECONDS,
    proberEvery: PROBE_EVERY,
  });
  const plan = {
    saleId: sale.id,
    buyers: BUYERS,
    purchase: lib.expectedPurchase(STRATEGY),
    retryLaterMs: RETRY_LATER_MS,
  };
  const deadline = opensAt + (LATE_SECONDS + MAX_WAIT) * 1000;
  const tally = { requests: 0, unexpected: {}, latency: {} };
  // This process's own lag: past a few tens of ms, the latencies below are partly the driver's, not the API's.
  const lag = monitorEventLoopDelay({ resolution: 20 });
  lag.enable();

  const cpu = cpuSampler();
  const before = cpu.snapshot({ api: pids });
  const started = Date.now();
  const sampler = sampleRoom(admin, sale.id, buyers, opensAt);
  await Promise.all(buyers.map((buyer) => drive(buyer, plan, sessions, deadline, tally)));
  const seconds = (Date.now() - started) / 1000;
  const usage = cpu.since(before);
  lag.disable();
  await sampler.stop();
  const unfinished = buyers.filter((b) => b.next).length;
  if (unfinished > 0) log(`${lib.n(unfinished)} buyers still waiting at the deadline (MAX_WAIT ${MAX_WAIT} s)`);

  const audit = await auditWhenQuiet(admin, sale.id);
  const figures = lib.roomFigures(buyers, STOCK, opensAt);
  const verdict = lib.judgeRoom(figures, audit, { purchaseP95Ms: P95_MS, etaP90Below: ETA_ERROR_P90 });
  const pollsPerSecond = figures.polls / seconds;
  const perPoll = (percentOfCore) =>
    percentOfCore === undefined || figures.polls === 0
      ? undefined
      : ((percentOfCore / 100) * seconds * 1e6) / figures.polls;
  const apiPerPoll = perPoll(usage.api);
  const machinePerPoll = perPoll((usage.machineBusyOfAllCores ?? 0) * cpus().length);

  const lines = [
    '='.repeat(100),
    `room-crowd against ${BASE_URL} — ${new Date(started).toISOString().replace('T', ' ').slice(0, 19)} UTC, ${seconds.toFixed(1)} s`,
    `Correctness: ${verdict.correctness.pass ? 'PASS' : 'FAIL'} — ${verdict.correctness.reason}`,
    `Fairness:    ${verdict.fairness.pass ? 'PASS' : 'FAIL'} — ${verdict.fairness.reason}`,
    `Result:      ${verdict.pass ? 'PASS (exit 0)' : 'FAIL (exit 1)'}`,
    '-'.repeat(100),
    `Polls ${lib.n(figures.polls)} (${lib.n(pollsPerSecond)}/s over the run's ${seconds.toFixed(0)} s); ` +
      `${lib.n(tally.requests)} requests from the crowd` +
      (apiPerPoll === undefined
        ? '; API CPU not measured (not on this machine)'
        : `; API CPU ${lib.n(apiPerPoll)} µs per poll (${usage.api} % of a core, ${pids.length} process(es)), ` +
          `machine ${lib.n(machinePerPoll)} µs per poll (this driver ${usage.loadGenerator} % of a core)`),
    `Latency as the crowd saw it (p50 / p95 / p99 ms): ${Object.entries(tally.latency)
      .map(([endpoint, values]) => {
        const p = (q) => lib.percentile(values, q)?.toFixed(0) ?? '—';
        return `${endpoint} ${p(50)} / ${p(95)} / ${p(99)}`;
      })
      .join(', ')}; this driver's event-loop delay p50 ${(lag.percentile(50) / 1e6).toFixed(0)} ms, ` +
      `p99 ${(lag.percentile(99) / 1e6).toFixed(0)} ms (above a few tens of ms, part of every latency is the driver's)`,
    ...lib.roomLines(figures),
    `Audit: held ${audit.held}, oversold ${audit.oversoldPeak} (at its peak), duplicate orders ${audit.duplicateOrders}, lost reservations ` +
      `${audit.lostReservations}, ok ${audit.ok ? 'yes' : 'NO'}${audit.drained ? '' : ' (queue NOT drained)'}`,
    ...(Object.keys(tally.unexpected).length > 0
      ? [
          `Answers outside the contract: ${Object.entries(tally.unexpected)
            .map(([k, v]) => `${k} × ${v}`)
            .join(', ')}`,
        ]
      : []),
    '='.repeat(100),
  ];
  console.log(lines.join('\n'));
  const resultsDir = path.join(ROOT, 'bench/results');
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(
    path.join(resultsDir, 'room-crowd.json'),
    JSON.stringify(
      {
        settings: {
          BASE_URL,
          BUYERS,
          EARLY,
          LATE,
          START_DELAY,
          LATE_SECONDS,
          STOCK,
          ADMIT_PER_SECOND,
          MAX_SHOPPING,
          PROBE_EVERY,
        },
        saleId: sale.id,
        seconds,
        verdict,
        figures,
        audit,
        cpu: { ...usage, apiPids: pids, apiUsPerPoll: apiPerPoll, machineUsPerPoll: machinePerPoll },
        driverEventLoopDelayMs: { p50: lag.percentile(50) / 1e6, p99: lag.percentile(99) / 1e6, max: lag.max / 1e6 },
        latencyMs: Object.fromEntries(
          Object.entries(tally.latency).map(([endpoint, values]) => [
            endpoint,
            {
              count: values.length,
              p50: lib.percentile(values, 50),
              p95: lib.percentile(values, 95),
              p99: lib.percentile(values, 99),
            },
          ]),
        ),
        unexpected: tally.unexpected,
        room: sampler.samples,
      },
      null,
      2,
    ),
  );
  // Every buyer's record, to judge again (load-tests/lib/waiting-room.ts) or to look into one buyer.
  writeFileSync(path.join(resultsDir, 'room-crowd-buyers.json'), JSON.stringify({ stock: STOCK, opensAt, buyers }));
  log('wrote bench/results/room-crowd.json and room-crowd-buyers.json');
  await http.close();
  return verdict.pass ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(`[room-crowd] FAILED: ${error?.stack ?? error}`);
    process.exit(1);
  },
);
