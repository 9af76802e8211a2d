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
import { parseArgs } from 'node:util';

const { values } = parseArgs({
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

/** The strategies that exist to oversell (libs/contract UNSAFE_STRATEGIES). */
const UNSAFE = ['naive-unsafe', 'redis-lock-unfenced'];

const show = (value, suffix = '') => (value === null || value === undefined ? '—' : `${value}${suffix}`);

const { token } = await call('POST', '/auth/admin', undefined, { password });
const pauseLockHolder = values['pause-lock-holder'];
const { id } = await call('POST', '/admin/demo-runs', token, {
  stock: Number(values.stock),
  buyers: Number(values.buyers),
  strategies: values.strategies?.split(',').map((strategy) => strategy.trim()),
  pauseLockHolder,
});
console.log(
  `Demo ${id}: ${values.buyers} buyers at once for ${values.stock} units, per strategy` +
    `${pauseLockHolder ? ', the first lock holder paused past its TTL' : ''} (${base})`,
);

let run;
let lastLine = '';
for (;;) {
  run = await call('GET', `/admin/demo-runs/${id}`, token);
  const line = run.results
    .map((r) => `${r.strategy}: ${r.phase}${r.phase === 'buying' ? ` ${r.sent}` : ''}`)
    .join(' · ');
  if (line !== lastLine) console.log(`  ${line}`);
  lastLine = line;
  if (run.status !== 'running') break;
  await new Promise((resolve) => setTimeout(resolve, 500));
}

console.log('');
console.log(
  table([
    ['strategy', 'accepted', 'refused', 'errors', 'retried', 'oversold', 'req/s', 'p50', 'p95', 'audit'],
    ...run.results.map((r) => [
      UNSAFE.includes(r.strategy) ? `${r.strategy} (UNSAFE)` : r.strategy,
      r.accepted,
      r.refused,
      r.errors,
      show(r.retried),
      show(r.oversold),
      show(r.requestsPerSecond),
      show(r.p50Ms, ' ms'),
      show(r.p95Ms, ' ms'),
      r.audit ? (r.audit.ok ? 'ok' : `NOT ok (held ${r.audit.held} of ${r.audit.stock})`) : (r.error ?? '—'),
    ]),
  ]),
);
console.log('');
const safeOversold = run.results.filter((r) => !UNSAFE.includes(r.strategy) && r.oversold !== 0);
for (const unsafe of run.results.filter((r) => UNSAFE.includes(r.strategy) && r.oversold > 0)) {
  console.log(`${unsafe.strategy} promised ${unsafe.oversold} unit(s) that do not exist: lost updates.`);
}
if (run.results.some((r) => r.retried > 0 || r.errors > 0)) {
  console.log('retried: buyers told 503 + retry-after (optimistic retries ran out, or the lock could not be had or');
  console.log('         was lost: nothing was sold) who tried again with the same token, as the storefront does,');
  console.log('         twice at most; their final answer is in accepted, refused or errors. errors: still "try');
  console.log('         again" after that, or no answer; never an oversell.');
}
console.log(
  safeOversold.length === 0
    ? 'Every guarded strategy sold at most its stock, and its audit balanced.'
    : `UNEXPECTED: ${safeOversold.map((r) => r.strategy).join(', ')} did not end with oversold 0.`,
);
console.log(`Kept: open ${base}/admin/demo?run=${id} to see it in the admin console.`);
process.exit(run.status === 'finished' && safeOversold.length === 0 ? 0 : 1);
