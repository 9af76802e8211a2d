#!/usr/bin/env node
/**
 * The k6 scenarios' default load shapes, replayed from Node (undici) against a running API: what a
 * machine without k6 can measure of them. Each shape comes from load-tests/lib/shapes.ts itself
 * (compiled on the fly by esbuild), so the figures here are those of the shapes k6 will ask for.
 *
 *   node bench/k6-shapes.mjs burst|duplicate-clicks|comparison|stampede|soak [--runs N]
 *
 * BASE_URL (http://localhost:3000), ADMIN_PASSWORD (admin), P95_MS (500); STRATEGY (burst, stampede;
 * naive-unsafe shows the oversell verdict), STRATEGIES (comparison), DURATION_S (soak). The API must run with
 * RATE_LIMIT_PROFILE=load-test (`npm run start:load`), as for k6. Per run it prints both verdicts, the
 * load offered and achieved, latency per endpoint and the p95 margin (bound ÷ p95).
 *
 * Like k6's arrival-rate executors, arrivals are open: a buyer arrives on schedule whatever the API
 * answered before. One connection per buyer in flight, as one VU each.
 */
import { Buffer } from 'node:buffer';
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { Agent, request } from 'undici';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BASE_URL = (process.env.BASE_URL || 'http://localhost:3000').replace(/\/+$/, '');
const ADMIN_PASSWORD = process.env.ADMIN_PASSWORD || 'admin';
const P95_MS = Number(process.env.P95_MS || 500);
const agent = new Agent({ connections: 2000, pipelining: 1, keepAliveTimeout: 10_000 });

async function loadShapes() {
  const out = await build({
    entryPoints: [path.join(ROOT, 'load-tests/lib/shapes.ts')],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'neutral',
    external: ['k6', 'k6/*'],
  });
  return import(`data:text/javascript;base64,${Buffer.from(out.outputFiles[0].text).toString('base64')}`);
}

/** Every request's latency by endpoint, and answers by status. */
function recorder() {
  const latencies = {};
  const statuses = {};
  return {
    latencies,
    statuses,
    async call(endpoint, method, url, { token, json } = {}) {
      const headers = { 'content-type': 'application/json' };
      if (token) headers.authorization = `Bearer ${token}`;
      const started = performance.now();
      let status = 0;
      let body;
      let retryAfter;
      try {
        const answer = await request(`${BASE_URL}${url}`, {
          method,
          headers,
          body: method === 'POST' ? JSON.stringify(json ?? {}) : undefined,
          dispatcher: agent,
          headersTimeout: 30_000,
          bodyTimeout: 30_000,
        });
        status = answer.statusCode;
        retryAfter = Number(answer.headers['retry-after']) || undefined;
        const text = await answer.body.text();
        body = text ? JSON.parse(text) : undefined;
      } catch (error) {
        body = { error: { code: 'NETWORK', message: String(error.message ?? error) } };
      }
      (latencies[endpoint] ??= []).push(performance.now() - started);
      statuses[status] = (statuses[status] ?? 0) + 1;
      return { status, body, retryAfter };
    },
  };
}

function percentile(values, p) {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}
const ms = (v) => (v === undefined ? '—' : `${v.toFixed(v < 10 ? 1 : 0)} ms`);

/** A k6 duration (`90s`, `5m`, `1h30m`) in seconds. */
function durationSeconds(text) {
  const [, h = 0, m = 0, sec = 0] = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/.exec(text) ?? [];
  return Number(h) * 3600 + Number(m) * 60 + Number(sec);
}

/** Arrival instants (ms from the start) of a spike, as k6's ramping-arrival-rate spaces them. */
function arrivals(shape) {
  const stages = [
    [shape.rampUpS, 0, shape.peakRate],
    [shape.holdS, shape.peakRate, shape.peakRate],
    [shape.rampDownS, shape.peakRate, 0],
  ];
  const times = [];
  let t = 0;
  let due = 0;
  const step = 0.005;
  for (const [duration, from, to] of stages) {
    for (let s = 0; s < duration; s += step) {
      due += (from + ((to - from) * s) / duration) * step;
      while (due >= 1) {
        times.push((t + s) * 1000);
        due -= 1;
      }
    }
    t += duration;
  }
  return times;
}

/** Runs `buyer(i)` at each arrival instant without waiting for the ones before; resolves when all ended. */
async function runArrivals(times, buyer) {
  const started = performance.now();
  const running = [];
  for (let i = 0; i < times.length; i++) {
    const wait = times[i] - (performance.now() - started);
    if (wait > 1) await sleep(wait);
    running.push(buyer(i));
  }
  await Promise.all(running);
  return (performance.now() - started) / 1000;
}

async function admin(rec) {
  const answer = await rec.call('auth_admin', 'POST', '/api/auth/admin', { json: { password: ADMIN_PASSWORD } });
  if (answer.status !== 201) throw new Error(`admin sign-in answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  return answer.body.token;
}

async function createSale(rec, token, { name, stock, strategy, startsInS = 0 }) {
  const startsAt = new Date(Date.now() + startsInS * 1000);
  const answer = await rec.call('create_sale', 'POST', '/api/admin/sales', {
    token,
    json: {
      name,
      priceCents: 4999,
      stock,
      perUserLimit: 1,
      strategy,
      startsAt: startsAt.toISOString(),
      endsAt: new Date(startsAt.getTime() + 3_600_000).toISOString(),
      purpose: 'load-test',
    },
  });
  if (answer.status !== 201)
    throw new Error(`creating the sale answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  return answer.body;
}

async function auditWhenQuiet(rec, token, saleId) {
  for (let i = 0; i < 120; i++) {
    const answer = await rec.call('audit', 'GET', `/api/admin/sales/${saleId}/audit`, { token });
    if (answer.status === 200 && answer.body.ordersByStatus.QUEUED === 0) return answer.body;
    await sleep(500);
  }
  throw new Error(`sale ${saleId}: queue not drained after 60 s`);
}

/** Outcome counters and the buyer steps shared by the shapes. */
function tally() {
  return {
    accepted: 0,
    soldOut: 0,
    limit: 0,
    unexpected: 0,
    otherBroken: 0,
    signIn429: 0,
    retriedLater: 0,
    gaveUp: 0,
    notes: [],
  };
}

async function prepare(rec, t, saleId, name) {
  const guest = await rec.call('auth_guest', 'POST', '/api/auth/guest', { json: { name } });
  if (guest.status !== 201) {
    if (guest.status === 429) t.signIn429++;
    t.otherBroken++;
    return null;
  }
  const token = await rec.call('token', 'POST', `/api/sales/${saleId}/tokens`, { token: guest.body.token });
  if (token.status !== 201) {
    t.otherBroken++;
    return null;
  }
  return { session: guest.body.token, token: token.body.token };
}

function classify(t, answer, strategy) {
  const code = answer.body?.error?.code;
  const success = strategy === 'redis-lua' ? 202 : 201;
  if (answer.status === success && answer.body?.orderNo) return (t.accepted++, 'accepted');
  if (answer.status === 410 && code === 'SOLD_OUT') return (t.soldOut++, 'sold_out');
  if (answer.status === 409 && code === 'LIMIT_REACHED') return (t.limit++, 'limit');
  if (answer.status === 409 && code === 'SALE_NOT_STARTED') return 'not_started';
  if ((answer.status === 503 && code === 'UNAVAILABLE') || (answer.status === 429 && code === 'RATE_LIMITED')) {
    return (t.retriedLater++, 'retry_later');
  }
  t.unexpected++;
  if (t.notes.length < 3) t.notes.push(`purchase ${answer.status} ${code ?? ''}`);
  return 'unexpected';
}

async function purchase(rec, t, buyer, saleId, strategy, submitToken = buyer.token) {
  const deadline = Date.now() + 5000;
  const retryLaterUntil = Date.now() + 15_000; // RETRY_LATER_SECONDS of load-tests/lib/flows.ts
  for (;;) {
    const answer = await rec.call('purchase', 'POST', `/api/sales/${saleId}/purchase`, {
      token: buyer.session,
      json: { token: submitToken },
    });
    const outcome = classify(t, answer, strategy);
    if (outcome === 'retry_later') {
      const wait = (answer.retryAfter ?? 1) * 1000;
      if (Date.now() + wait > retryLaterUntil) return (t.gaveUp++, { outcome, answer });
      await sleep(wait);
      continue;
    }
    if (outcome !== 'not_started' || Date.now() > deadline) return { outcome, answer };
    await sleep(50);
  }
}

/** The two verdicts, as the k6 report states them. */
function verdicts(t, audits, stock, latencyBounds, { unsafeAllowed = [] } = {}) {
  const facts = [];
  for (const [label, audit] of audits) {
    if (unsafeAllowed.includes(label)) continue;
    if (audit.oversold > 0)
      facts.push(`OVERSOLD ${audit.oversold} unit(s) [${label}]: held ${audit.held} of a stock of ${audit.stock}`);
    if (!audit.ok) facts.push(`audit not clean [${label}]`);
  }
  if (stock !== undefined && t.accepted > stock) facts.push(`accepted ${t.accepted}, expected <=${stock}`);
  if (t.unexpected > 0) facts.push(`${t.unexpected} purchase answer(s) outside the contract (${t.notes.join(', ')})`);
  if (t.otherBroken > 0)
    facts.push(`${t.otherBroken} other call(s) broke the contract (${t.signIn429} sign-ins refused 429)`);
  const over = latencyBounds.filter((b) => b.value !== undefined && b.value >= b.below);
  if (t.gaveUp > 0) over.push({ label: 'buyers who gave up on 429/503', value: t.gaveUp, below: 1 });
  return {
    correctness:
      facts.length === 0
        ? 'PASS — 0 oversold, audit clean, every answer in the contract'
        : `FAIL — ${facts.join('; ')}`,
    latency:
      (over.length === 0 ? 'PASS — ' : `FAIL (${over.map((b) => b.label).join(', ')}) — `) +
      latencyBounds.map((b) => `${b.label} ${ms(b.value)} (margin ${(b.below / b.value).toFixed(1)}×)`).join(', '),
  };
}

function printRun(title, rec, t, seconds, offered, verdict) {
  const lines = [];
  if (t.signIn429 > 0) {
    lines.push(
      `!! SIGN-INS RATE-LIMITED: ${t.signIn429} guest sign-ins answered 429. Start the API with RATE_LIMIT_PROFILE=load-test (npm run start:load).`,
    );
  }
  const all = Object.values(rec.latencies).flat();
  lines.push(
    `${title}`,
    `  Correctness: ${verdict.correctness}`,
    `  Latency:     ${verdict.latency}`,
    `  offered ${offered}; ${all.length} requests in ${seconds.toFixed(1)} s (${(all.length / seconds).toFixed(0)} req/s); ` +
      `accepted ${t.accepted}, sold out ${t.soldOut}, limit ${t.limit}, unexpected ${t.unexpected}, other broken ${t.otherBroken}, ` +
      `retried later ${t.retriedLater}, gave up ${t.gaveUp}`,
    `  every request: p50 ${ms(percentile(all, 50))}, p95 ${ms(percentile(all, 95))}, p99 ${ms(percentile(all, 99))}, max ${ms(Math.max(...all))}`,
    ...Object.entries(rec.latencies).map(
      ([endpoint, v]) =>
        `    ${endpoint.padEnd(12)} ${String(v.length).padStart(6)}  p50 ${ms(percentile(v, 50)).padStart(7)}  p95 ${ms(percentile(v, 95)).padStart(7)}  p99 ${ms(percentile(v, 99)).padStart(7)}`,
    ),
    `  answers by status: ${Object.entries(rec.statuses)
      .map(([s, n]) => `${s} × ${n}`)
      .join(', ')}`,
  );
  console.log(lines.join('\n'));
}

const SHAPES = {
  async burst(lib) {
    const rec = recorder();
    const t = tally();
    const strategy = process.env.STRATEGY || 'redis-lua';
    const stock = lib.DEFAULT_STOCK.burst;
    const token = await admin(rec);
    const sale = await createSale(rec, token, { name: `node burst ${Date.now()}`, stock, strategy });
    const shape = lib.DEFAULT_SHAPES.burst;
    const times = arrivals(shape);
    const load = recorder();
    const seconds = await runArrivals(times, async (i) => {
      const buyer = await prepare(load, t, sale.id, `node-burst-${i}`);
      if (buyer) await purchase(load, t, buyer, sale.id, strategy);
    });
    const audit = await auditWhenQuiet(rec, token, sale.id);
    const purchaseP95 = percentile(load.latencies.purchase ?? [], 95);
    const allP95 = percentile(Object.values(load.latencies).flat(), 95);
    const verdict = verdicts(t, [[strategy, audit]], stock, [
      { label: 'purchase p95', value: purchaseP95, below: P95_MS },
      { label: 'every request p95', value: allP95, below: P95_MS },
    ]);
    printRun(
      `burst (${strategy}, stock ${stock}, spike ${JSON.stringify(shape)})`,
      load,
      t,
      seconds,
      `${times.length} buyers`,
      verdict,
    );
  },

  async 'duplicate-clicks'(lib) {
    const rec = recorder();
    const t = tally();
    const stock = lib.DEFAULT_STOCK.duplicateClicks;
    const token = await admin(rec);
    const sale = await createSale(rec, token, { name: `node dup ${Date.now()}`, stock, strategy: 'redis-lua' });
    const shape = lib.DEFAULT_SHAPES.duplicateClicks;
    const times = arrivals(shape);
    const load = recorder();
    let mismatches = 0;
    let overLimit = 0;
    const seconds = await runArrivals(times, async (i) => {
      const buyer = await prepare(load, t, sale.id, `node-dup-${i}`);
      if (!buyer) return;
      const extra = [];
      for (let k = 0; k < 2; k++) {
        const more = await load.call('token', 'POST', `/api/sales/${sale.id}/tokens`, { token: buyer.session });
        if (more.status !== 201) return void t.otherBroken++;
        extra.push(more.body.token);
      }
      const sent = [...Array(5).fill(buyer.token), ...extra];
      const results = await Promise.all(sent.map((submit) => purchase(load, t, buyer, sale.id, 'redis-lua', submit)));
      const clicks = results
        .slice(0, 5)
        .map((r) => `${r.answer.status} ${r.answer.body?.orderNo ?? r.answer.body?.error?.code}`);
      if (new Set(clicks).size !== 1) mismatches++;
      // Replays of the winning token count once: the k6 scenario counts them in purchase_replayed.
      const orders = new Set(results.filter((r) => r.outcome === 'accepted').map((r) => r.answer.body.orderNo));
      t.accepted -= results.filter((r) => r.outcome === 'accepted').length - orders.size;
      if (orders.size > 1) overLimit++;
      for (const orderNo of orders)
        await load.call('get_order', 'GET', `/api/orders/${orderNo}`, { token: buyer.session });
    });
    const audit = await auditWhenQuiet(rec, token, sale.id);
    if (mismatches + overLimit > 0) t.notes.push(`replays disagreed ${mismatches}, over limit ${overLimit}`);
    t.unexpected += mismatches + overLimit;
    const verdict = verdicts(t, [['redis-lua', audit]], stock, [
      { label: 'purchase p95', value: percentile(load.latencies.purchase ?? [], 95), below: P95_MS },
      { label: 'every request p95', value: percentile(Object.values(load.latencies).flat(), 95), below: P95_MS },
    ]);
    printRun(
      `duplicate-clicks (stock ${stock}, spike ${JSON.stringify(shape)}, 5 clicks + 2 tokens)`,
      load,
      t,
      seconds,
      `${times.length} buyers`,
      verdict,
    );
  },

  async comparison(lib) {
    const strategies = (process.env.STRATEGIES || 'redis-lua,db-optimistic,db-pessimistic,naive-unsafe').split(',');
    const stock = lib.DEFAULT_STOCK.comparison;
    const shape = lib.DEFAULT_SHAPES.comparison;
    for (const strategy of strategies) {
      const rec = recorder();
      const t = tally();
      const token = await admin(rec);
      const sale = await createSale(rec, token, { name: `node cmp ${strategy} ${Date.now()}`, stock, strategy });
      const times = arrivals(shape);
      const load = recorder();
      const seconds = await runArrivals(times, async (i) => {
        const buyer = await prepare(load, t, sale.id, `node-cmp-${strategy}-${i}`);
        if (buyer) await purchase(load, t, buyer, sale.id, strategy);
      });
      const audit = await auditWhenQuiet(rec, token, sale.id);
      const verdict = verdicts(
        t,
        [[strategy, audit]],
        strategy === 'naive-unsafe' ? undefined : stock,
        [
          { label: 'purchase p95', value: percentile(load.latencies.purchase ?? [], 95), below: P95_MS },
          { label: 'every request p95', value: percentile(Object.values(load.latencies).flat(), 95), below: P95_MS },
        ],
        { unsafeAllowed: ['naive-unsafe'] },
      );
      printRun(
        `comparison: ${strategy} (stock ${stock}, spike ${JSON.stringify(shape)}; oversold ${audit.oversold})`,
        load,
        t,
        seconds,
        `${times.length} buyers`,
        verdict,
      );
      await sleep(10_000); // the scenario's GAP between strategies
    }
  },

  /** soak: RATE buyers/s for DURATION_S (default: the scenario's 5 min) over SALES sales; some pay, some cancel. */
  async soak(lib) {
    const rec = recorder();
    const t = tally();
    const soak = lib.DEFAULT_SOAK;
    const seconds = Number(process.env.DURATION_S || durationSeconds(soak.duration));
    const token = await admin(rec);
    const sales = [];
    for (let i = 0; i < soak.sales; i++) {
      sales.push(
        await createSale(rec, token, {
          name: `node soak ${Date.now()} #${i}`,
          stock: 1_000_000,
          strategy: 'redis-lua',
        }),
      );
    }
    const times = Array.from({ length: soak.rate * seconds }, (_, i) => (i * 1000) / soak.rate);
    const load = recorder();
    let paid = 0;
    let cancelled = 0;
    const elapsed = await runArrivals(times, async (i) => {
      const sale = sales[i % sales.length];
      const buyer = await prepare(load, t, sale.id, `node-soak-${i}`);
      if (!buyer) return;
      const { outcome, answer } = await purchase(load, t, buyer, sale.id, 'redis-lua');
      const dice = Math.random();
      if (outcome !== 'accepted' || dice >= soak.payRatio + soak.cancelRatio) return;
      const orderNo = answer.body.orderNo;
      const deadline = Date.now() + 15_000; // ORDER_WAIT
      let order;
      do {
        order = await load.call('get_order', 'GET', `/api/orders/${orderNo}`, { token: buyer.session });
        if (order.body?.status === 'QUEUED') await sleep(200);
      } while (order.body?.status === 'QUEUED' && Date.now() < deadline);
      if (order.status !== 200 || order.body.status !== 'PENDING_PAYMENT') return void t.otherBroken++;
      const action = dice < soak.payRatio ? 'pay' : 'cancel';
      const done = await load.call(action, 'POST', `/api/orders/${orderNo}/${action}`, { token: buyer.session });
      const expected = action === 'pay' ? 'PAID' : 'CANCELLED';
      if (done.status !== 200 || done.body.status !== expected) return void t.otherBroken++;
      if (action === 'pay') paid++;
      else cancelled++;
    });
    const audits = [];
    for (const sale of sales) audits.push([`sale ${sale.id}`, await auditWhenQuiet(rec, token, sale.id)]);
    const verdict = verdicts(t, audits, undefined, [
      { label: 'purchase p95', value: percentile(load.latencies.purchase ?? [], 95), below: P95_MS },
      { label: 'every request p95', value: percentile(Object.values(load.latencies).flat(), 95), below: P95_MS },
    ]);
    printRun(
      `soak (${soak.rate}/s for ${seconds} s over ${soak.sales} sales; ${paid} paid, ${cancelled} cancelled)`,
      load,
      t,
      elapsed,
      `${times.length} buyers`,
      verdict,
    );
  },

  async stampede(lib) {
    const rec = recorder();
    const t = tally();
    const strategy = process.env.STRATEGY || 'redis-lua';
    const users = Number(process.env.USERS || lib.DEFAULT_STAMPEDE.users);
    const stock = lib.DEFAULT_STOCK.stampede;
    const within = lib.DEFAULT_STAMPEDE.answeredWithinS;
    const token = await admin(rec);
    const sale = await createSale(rec, token, { name: `node stampede ${Date.now()}`, stock, strategy, startsInS: 10 });
    const opening = Date.parse(sale.startsAt);
    const load = recorder();
    const started = performance.now();
    // Every buyer signs in and takes a token before the opening (as the k6 VUs do), then waits for it.
    const buyers = await Promise.all(
      Array.from({ length: users }, (_, i) =>
        sleep(Math.random() * 5000).then(() => prepare(load, t, sale.id, `node-st-${i}`)),
      ),
    );
    await sleep(Math.max(0, opening - Date.now()));
    const answeredAfter = await Promise.all(
      buyers.map(async (buyer) => {
        if (!buyer) return 0;
        await purchase(load, t, buyer, sale.id, strategy);
        return Date.now() - opening;
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const audit = await auditWhenQuiet(rec, token, sale.id);
    const last = Math.max(...answeredAfter);
    const verdict = verdicts(t, [[strategy, audit]], stock, [
      { label: 'last buyer answered', value: last, below: within * 1000 },
    ]);
    if (t.accepted !== Math.min(stock, users))
      verdict.correctness = `FAIL — accepted ${t.accepted}, expected ${Math.min(stock, users)}; ${verdict.correctness}`;
    printRun(
      `stampede (${strategy}, ${users} buyers in one instant, stock ${stock}; ${(users / (last / 1000)).toFixed(0)} answers/s)`,
      load,
      t,
      seconds,
      `${users} buyers`,
      verdict,
    );
  },
};

const which = process.argv[2];
const runsFlag = process.argv.indexOf('--runs');
const runs = runsFlag > 0 ? Number(process.argv[runsFlag + 1]) : 1;
if (!SHAPES[which]) {
  console.error(`usage: node bench/k6-shapes.mjs ${Object.keys(SHAPES).join('|')} [--runs N]`);
  process.exit(2);
}
const lib = await loadShapes();
for (let run = 1; run <= runs; run++) {
  // The machine's load average, before and after: on a shared machine, other work's CPU shows up as latency.
  const load = () => `load average ${loadavg()[0].toFixed(1)} on ${cpus().length} cores`;
  console.log(`\n--- ${which}, run ${run} of ${runs}, against ${BASE_URL} (${load()})`);
  await SHAPES[which](lib);
  console.log(`    (${load()} at the end)`);
}
await agent.close();
