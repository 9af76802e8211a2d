#!/usr/bin/env node
/**
 * `npm run rehearsal` (as root): the compose deployment rehearsed as machines on a real network
 * (docs/operations.md, "Running on several machines"): a balancer, 2 API and 2 worker machines, a Redis
 * Cluster of 3 masters and 3 replicas, a MariaDB primary and replica (scripts/lib/machine-deployment.mjs).
 *
 * It sells a burst of buyers through the balancer, waits for every order to be written, audits the sale,
 * checks that the replica holds every order row, prints where each machine is, and tears everything down
 * (also on Ctrl-C and on failure). With `--hold` it stays up after the burst, for k6 or a browser on
 * this host, until Ctrl-C. Exit: 0 the audit passed, 1 it failed, 2 machines cannot be made here.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createConnection } from 'mysql2/promise';
import { parseCommandLine } from './lib/cli.mjs';
import { httpClient } from './lib/http-client.mjs';
import { ADMIN_PASSWORD, API_MACHINES, startMachineDeployment } from './lib/machine-deployment.mjs';
import { machinesAvailable } from './lib/machines.mjs';
import { killOnExit, waitFor, waitUntil } from './lib/processes.mjs';

const USAGE = `Usage: npm run rehearsal -- [options]   (as root; docs/operations.md, "Running on several machines")
  --buyers N     buyers in the burst (default 600), each buying one unit once
  --stock N      units of the rehearsal's sale (default 200): more buyers than units, so some hear 410
  --hold         stay up after the audit, for k6 or a browser on this host, until Ctrl-C
  --keep-logs    keep the machines' logs (they are kept anyway when something fails)
  --help         this text`;

const log = (line) => console.log(`[rehearsal] ${line}`);

async function main() {
  const { values } = parseCommandLine({
    name: 'rehearsal',
    usage: USAGE,
    options: {
      buyers: { type: 'string', default: '600' },
      stock: { type: 'string', default: '200' },
      hold: { type: 'boolean', default: false },
      'keep-logs': { type: 'boolean', default: false },
    },
  });
  const buyers = positiveInteger(values.buyers, '--buyers');
  const stock = positiveInteger(values.stock, '--stock');
  const available = machinesAvailable();
  if (!available.ok) {
    console.error(`[rehearsal] machines cannot be made here: ${available.why}`);
    return 2;
  }
  const dir = mkdtempSync(path.join(tmpdir(), 'flash-sale-rehearsal-'));
  const rehearsal = { dir, deployment: undefined, keepLogs: values['keep-logs'] };
  onInterrupt(rehearsal);
  let passed = false;
  try {
    const deployment = await startMachineDeployment({ dir, log });
    rehearsal.deployment = deployment;
    const { network, baseUrl, mysql } = deployment;
    const http = httpClient(baseUrl);

    // Counted before and after: each API's startup warm-up buys on a sale of its own.
    const purchasesBefore = await deployment.purchasesByApi();
    const burst = await sellBurst(http, { buyers, stock });
    const purchasesAfter = await deployment.purchasesByApi();
    burst.byApi = Object.fromEntries(
      API_MACHINES.map((machine) => [machine, purchasesAfter[machine] - purchasesBefore[machine]]),
    );
    burst.balancer = await deployment.balancerView();
    // How leastconn shares a burst of short requests varies from run to run: said, not judged.
    log(`purchases answered by each API machine: ${JSON.stringify(burst.byApi)}`);
    log(`the balancer's view: ${JSON.stringify(burst.balancer)}`);
    const audit = await awaitWrittenAndAudit(http, burst);
    const replicated = await awaitReplica(mysql, burst.saleId, audit.rowsOnPrimary);
    printMachines(network, baseUrl);
    passed = report(burst, audit, replicated, stock);
    if (values.hold) {
      printHowToLoad(baseUrl);
      await new Promise(() => undefined); // until Ctrl-C (onInterrupt tears down)
    }
  } finally {
    await tearDown(rehearsal, passed);
  }
  return passed ? 0 : 1;
}

function positiveInteger(text, flag) {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) {
    console.error(`[rehearsal] ${flag} takes a positive integer, got "${text}"`);
    process.exit(2);
  }
  return value;
}

/** `buyers` guests, each one submit token and one purchase, 50 at a time, through the balancer. */
async function sellBurst(http, { buyers, stock }) {
  const admin = (await http.post('/api/auth/admin', { password: ADMIN_PASSWORD }, undefined, 201)).token;
  const sale = await http.post(
    '/api/admin/sales',
    {
      name: 'Rehearsal sale',
      priceCents: 1999,
      stock,
      perUserLimit: 1,
      endsAt: new Date(Date.now() + 3_600_000).toISOString(),
      purpose: 'load-test',
    },
    admin,
    201,
  );
  const statuses = {};
  let next = 0;
  const startedAt = performance.now();
  const buyer = async () => {
    while (next < buyers) {
      next += 1;
      const guest = await http.post('/api/auth/guest', {}, undefined, 201);
      const { token } = await http.post(`/api/sales/${sale.id}/tokens`, undefined, guest.token, 201);
      const status = await purchase(http, sale.id, token, guest.token);
      statuses[status] = (statuses[status] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: Math.min(50, buyers) }, buyer));
  const seconds = (performance.now() - startedAt) / 1000;
  log(`burst: ${buyers} buyers in ${seconds.toFixed(1)} s, answers ${JSON.stringify(statuses)}`);
  return { saleId: sale.id, admin, statuses, accepted: statuses[202] ?? 0 };
}

/** One purchase; a 429 or 503 with retry-after means nothing happened: sent again after the wait. */
async function purchase(http, saleId, token, accessToken) {
  for (let attempt = 0; attempt < 20; attempt++) {
    const { status, headers } = await http.answer(
      'POST',
      `/api/sales/${saleId}/purchase`,
      JSON.stringify({ token }),
      `Bearer ${accessToken}`,
    );
    const retryAfter = headers.get('retry-after');
    if ((status === 429 || status === 503) && retryAfter !== null) {
      await new Promise((resolve) => setTimeout(resolve, Math.max(100, Number(retryAfter) * 1000 || 0)));
      continue;
    }
    return status;
  }
  return 'retries-exhausted';
}

/** Until the workers have written every accepted order; then the audit's verdict. */
async function awaitWrittenAndAudit(http, burst) {
  let audit;
  await waitFor(`the ${burst.accepted} accepted orders to be written`, async () => {
    audit = await http.get(`/api/admin/sales/${burst.saleId}/audit`, burst.admin);
    const written = Object.entries(audit.ordersByStatus ?? {})
      .filter(([status]) => status !== 'QUEUED')
      .reduce((sum, [, count]) => sum + count, 0);
    return written >= burst.accepted;
  });
  const rowsOnPrimary = Object.values(audit.ordersByStatus ?? {}).reduce((sum, count) => sum + count, 0);
  return { ...audit, rowsOnPrimary };
}

/** The replica's copy of the sale's orders, once it has caught up (or what it had after 30 s). */
async function awaitReplica(mysql, saleId, rowsOnPrimary) {
  const connection = await createConnection({ host: mysql.replica, user: 'root', database: 'flash_sale' });
  try {
    let rows = 0;
    const caughtUp = await waitUntil(async () => {
      const [[row]] = await connection.query('SELECT COUNT(*) AS n FROM orders WHERE sale_id = ?', [saleId]);
      rows = Number(row.n);
      return rows === rowsOnPrimary;
    }, 30_000);
    return { rows, caughtUp };
  } finally {
    await connection.end();
  }
}

function report(burst, audit, replicated, stock) {
  const checks = [
    [
      'every buyer was answered 202 or 410',
      Object.keys(burst.statuses).every((status) => ['202', '410'].includes(status)),
    ],
    [`units sold ≤ stock (${burst.accepted} of ${stock})`, burst.accepted <= stock],
    [
      'the balancer sees every API machine up',
      API_MACHINES.every((machine, index) => burst.balancer[`api-${index + 1}`]?.status === 'UP'),
    ],
    ['the audit passed (no oversell, no lost order, no duplicate)', audit.ok === true],
    [`the replica holds every order row (${replicated.rows} of ${audit.rowsOnPrimary})`, replicated.caughtUp],
  ];
  for (const [what, ok] of checks) log(`${ok ? 'PASS' : 'FAIL'}  ${what}`);
  if (audit.ok !== true) log(`audit: ${JSON.stringify(audit)}`);
  return checks.every(([, ok]) => ok);
}

function printMachines(network, baseUrl) {
  log('machines:');
  for (const machine of Object.values(network.machines)) {
    log(`  ${machine.name.padEnd(9)} ${machine.address.padEnd(14)} (namespace ${machine.namespace})`);
  }
  for (const [name, { address, holder }] of Object.entries(network.floating)) {
    log(`  ${name.padEnd(13)} ${address.padEnd(14)} (floating, on ${holder})`);
  }
  log(`the balancer (the API, and the storefront once built): ${baseUrl}`);
}

function printHowToLoad(baseUrl) {
  log('holding the deployment up until Ctrl-C. From this host:');
  log(`  k6 run -e BASE_URL=${baseUrl} load-tests/flash-sale-burst.ts`);
  log(`  k6-0.48 run -e BASE_URL=${baseUrl} load-tests/dist/flash-sale-burst.js   (after npm run k6:bundle)`);
}

async function tearDown(rehearsal, passed) {
  if (rehearsal.tornDown) return;
  rehearsal.tornDown = true;
  await rehearsal.deployment?.stop();
  for (const child of killOnExit) child.kill('SIGKILL');
  if (passed && !rehearsal.keepLogs) rmSync(rehearsal.dir, { recursive: true, force: true });
  else log(`logs kept in ${rehearsal.dir}`);
  log('torn down: no machine, link or process of the rehearsal is left');
}

/** Ctrl-C (or a signal from a supervisor) tears down first; another signal meanwhile changes nothing. */
function onInterrupt(rehearsal) {
  let stopping = false;
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(signal, async () => {
      if (stopping) return;
      stopping = true;
      log(`${signal}: tearing down`);
      await tearDown(rehearsal, true);
      process.exit(130);
    });
  }
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(`[rehearsal] FAILED: ${error?.stack ?? error}`);
    process.exit(1);
  },
);
