/** The two verdicts of a run, as the k6 report states them, and the run's printed summary. */

const P95_MS = Number(process.env.P95_MS || 500);

function percentile(values, p) {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}
const ms = (v) => (v === undefined ? '—' : `${v.toFixed(v < 10 ? 1 : 0)} ms`);

/** The spike scenarios' latency bounds: the purchase's p95 and every request's, under P95_MS. */
export function p95Bounds(rec) {
  return [
    { label: 'purchase p95', value: percentile(rec.latencies.purchase ?? [], 95), below: P95_MS },
    { label: 'every request p95', value: percentile(Object.values(rec.latencies).flat(), 95), below: P95_MS },
  ];
}

/** The two verdicts from the tally, the audits (`[label, audit]`) and the latency bounds. */
export function verdicts(t, audits, stock, latencyBounds, { unsafeAllowed = [] } = {}) {
  const facts = [];
  for (const [label, audit] of audits) {
    if (unsafeAllowed.includes(label)) continue;
    if (audit.oversoldPeak > 0)
      facts.push(`OVERSOLD ${audit.oversoldPeak} unit(s) [${label}]: held ${audit.held} of a stock of ${audit.stock}`);
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

export function printRun(title, rec, t, seconds, offered, verdict) {
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
