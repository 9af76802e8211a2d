// `npm run demo`: the oversell demonstration in the terminal. Asks the running app (npm start) to run
// it — one sale per strategy, the same burst of distinct buyers at each, every sale audited — and prints
// the same table as the admin console's Oversell demo page.
//
//   npm run demo                              # 50 units, 500 buyers, against http://localhost:3000
//   npm run demo -- --stock 100 --buyers 1000
//   npm run demo -- --no-pause-lock-holder    # no redis-lock holder pauses past the lock's TTL (the
//                                             # default pauses one: without it redis-lock-unfenced never oversells)
//   npm run demo -- --strategies db-optimistic,db-segmented
//   DEMO_URL=http://host:3000 ADMIN_PASSWORD=… npm run demo
import { createRequire } from 'node:module';
import { parseCommandLine } from './lib/cli.mjs';

/** The contract's tables, built by `npm start` (or `npx tsc -b`): the demo names strategies as the console does. */
const { UNSAFE_STRATEGIES } = createRequire(import.meta.url)('@flash-sale/contract');

const USAGE = `Usage: npm run demo -- [options]
  --stock N                 units per strategy's sale (50)
  --buyers N                distinct buyers at once per sale (500)
  --strategies a,b          the strategies to run (the admin console's default list)
  --no-pause-lock-holder    no redis-lock holder paused past its TTL
  --url URL                 the running app (DEMO_URL, or http://localhost:$PORT|3000)
  --help                    this text
ADMIN_PASSWORD signs the admin in (admin).`;

const { values } = parseCommandLine({
  name: 'demo',
  usage: USAGE,
  allowNegative: true,
  options: {
    stock: { type: 'string', default: '50' },
    buyers: { type: 'string', default: '500' },
    strategies: { type: 'string' },
    // On by default: the paused holder is what shows redis-lock-unfenced's oversell.
    'pause-lock-holder': { type: 'boolean', default: true },
    url: { type: 'string', default: process.env.DEMO_URL ?? `http://localhost:${process.env.PORT ?? 3000}` },
  },
});
const base = values.url.replace(/\/$/, '');
const password = process.env.ADMIN_PASSWORD ?? 'admin';

async function call(method, path, token, body) {
  let response;
  try {
    response = await fetch(`${base}/api${path}`, {
      method,
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    console.error(`Nothing answers at ${base}. Start the app first (npm start, in another terminal), or set DEMO_URL.`);
    process.exit(2);
  }
  const json = await response.json().catch(() => undefined);
  if (!response.ok) {
    console.error(`${method} ${path} → ${response.status} ${json?.error?.code ?? ''}: ${json?.error?.message ?? ''}`);
    process.exit(1);
  }
  return json;
}

function table(rows) {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => String(row[i]).length)));
  return rows
    .map((row) =>
      row
        .map((cell, i) => String(cell).padEnd(widths[i]))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

const show = (value, suffix = '') => (value === null || value === undefined ? '—' : `${value}${suffix}`);
/** Every line fits 80 columns: the strategy names carry a mark, explained under the table. */
const named = (strategy) => (UNSAFE_STRATEGIES.includes(strategy) ? `${strategy}*` : strategy);

/**
 * Progress on one line that rewrites itself on a terminal; elsewhere (a log, a pipe) one line as each
 * strategy finishes, so a log holds no half-drawn lines.
 */
const terminal = process.stdout.isTTY === true;
function progress(run) {
  const finished = (r) => r.phase === 'done' || r.phase === 'failed';
  const current = run.results.find((r) => !finished(r) && r.phase !== 'waiting') ?? null;
  const done = run.results.filter(finished).length;
  const doing = current
    ? `${current.strategy} ${current.phase}${current.phase === 'buying' ? ` ${current.sent}/${values.buyers}` : ''}`
    : run.status;
  return `  ${done}/${run.results.length} done · ${doing}`.slice(0, (process.stdout.columns ?? 80) - 1);
}

const { token } = await call('POST', '/auth/admin', undefined, { password });
const pauseLockHolder = values['pause-lock-holder'];
const { id } = await call('POST', '/admin/demo-runs', token, {
  stock: Number(values.stock),
  buyers: Number(values.buyers),
  strategies: values.strategies?.split(',').map((strategy) => strategy.trim()),
  pauseLockHolder,
});
console.log(`Demo ${id}`);
console.log(`${values.buyers} buyers at once for ${values.stock} units, per strategy`);
if (pauseLockHolder) console.log('(the first lock holder of each lock strategy paused past its TTL)');

let run;
const reported = new Set();
for (;;) {
  run = await call('GET', `/admin/demo-runs/${id}`, token);
  if (terminal) process.stdout.write(`\r\x1b[2K${progress(run)}`);
  else {
    for (const r of run.results.filter(
      (r) => (r.phase === 'done' || r.phase === 'failed') && !reported.has(r.strategy),
    )) {
      reported.add(r.strategy);
      console.log(`  ${r.strategy} ${r.phase}`);
    }
  }
  if (run.status !== 'running') break;
  await new Promise((resolve) => setTimeout(resolve, 500));
}
if (terminal) process.stdout.write('\r\x1b[2K');

console.log('');
console.log(
  table([
    ['strategy', 'accepted', 'refused', 'errors', 'retried', 'oversold', 'audit'],
    ...run.results.map((r) => [
      named(r.strategy),
      r.accepted,
      r.refused,
      r.errors,
      show(r.retried),
      show(r.oversold),
      r.audit ? (r.audit.ok ? 'ok' : 'NOT ok') : r.error ? 'failed' : '—',
    ]),
  ]),
);
console.log('');
console.log(
  table([
    ['strategy', 'req/s', 'p50', 'p95'],
    ...run.results.map((r) => [
      named(r.strategy),
      show(r.requestsPerSecond),
      show(r.p50Ms, ' ms'),
      show(r.p95Ms, ' ms'),
    ]),
  ]),
);
console.log('');
if (run.results.some((r) => UNSAFE_STRATEGIES.includes(r.strategy))) {
  console.log('* UNSAFE: exists to show an oversell (naive-unsafe: no guard at all;');
  console.log('  redis-lock-unfenced: trusts a lock its paused holder has lost).');
}
for (const r of run.results.filter((r) => r.error)) console.log(`${r.strategy} failed: ${r.error}`);
const safeOversold = run.results.filter((r) => !UNSAFE_STRATEGIES.includes(r.strategy) && r.oversold !== 0);
for (const unsafe of run.results.filter((r) => UNSAFE_STRATEGIES.includes(r.strategy) && r.oversold > 0)) {
  console.log(`${unsafe.strategy} promised ${unsafe.oversold} unit(s) that do not exist.`);
}
if (run.results.some((r) => r.retried > 0 || r.errors > 0)) {
  console.log('retried: buyers told 503 + retry-after (optimistic retries ran out, or the');
  console.log('  lock could not be had or was lost: nothing was sold) who tried again with');
  console.log('  the same token, as the storefront does, twice at most; their final answer');
  console.log('  is in accepted, refused or errors. errors: still "try again" after that,');
  console.log('  or no answer; never an oversell.');
}
console.log(
  safeOversold.length === 0
    ? 'Every guarded strategy sold at most its stock, and its audit balanced.'
    : `UNEXPECTED: ${safeOversold.map((r) => r.strategy).join(', ')} did not end with oversold 0.`,
);
console.log('Kept: see it in the admin console at');
console.log(`  ${base}/admin/demo?run=${id}`);
process.exit(run.status === 'finished' && safeOversold.length === 0 ? 0 : 1);
