import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ApiClient, inBatches } from '../support/api-client';
import { waitFor } from '../support/fixtures';
import { freePort } from '../../scripts/lib/ports.mjs';
import { answeringPid } from '../../scripts/lib/probes.mjs';
import { alive, childrenRunning, descendants } from '../support/process-table';
import { createTestEnv, type TestEnv } from '../support/test-env';

const ROOT = join(__dirname, '..', '..');

/** The pid of the API process that answered `GET /health` on a connection of its own, or 0 when none did. */
async function healthPid(port: number): Promise<number> {
  return (await answeringPid(`http://127.0.0.1:${port}/health`)) ?? 0;
}

function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) =>
    child.exitCode !== null || child.signalCode !== null
      ? resolve(child.exitCode)
      : child.once('exit', (code) => resolve(code)),
  );
}

/** The clone's uncommitted changes, to compare before and after a start. */
function gitStatus(): string {
  return execFileSync('git', ['status', '--porcelain'], { cwd: ROOT, encoding: 'utf8' });
}

/** What an app appended to its log file under .data/logs since `from` bytes. */
function logSince(name: string, from: number): string {
  const file = join(ROOT, '.data', 'logs', `${name}.log`);
  return existsSync(file) ? readFileSync(file).subarray(from).toString('utf8') : '';
}

function logSize(name: string): number {
  const file = join(ROOT, '.data', 'logs', `${name}.log`);
  return existsSync(file) ? statSync(file).size : 0;
}

/**
 * `npm start` (scripts/start.mjs) as a developer runs it, on this test's database and prefixes, at the
 * default log level, with two API processes on the one port (API_INSTANCES=2, node:cluster) and two
 * workers: the terminal stays calm (the banner last, a few dozen lines for a start and 100 purchases,
 * the access lines in .data/logs/) and the clone stays clean; both API processes answer on the port;
 * one is SIGKILLed mid-sale and the other answers while the cluster forks its replacement, then the
 * cluster's primary itself is SIGKILLed (its processes go with it, and the supervisor starts it
 * again); buying goes on and the sale's audit is ok; Ctrl-C (SIGINT) stops every process.
 */
describe('npm start supervises its children (real processes, MariaDB, Redis)', () => {
  let testEnv: TestEnv;
  let start: ChildProcess;
  let output = '';
  let outputAtStart = '';
  let client: ApiClient;
  let statusBefore: string;
  let port: number;
  const logOffsets = { api: 0, worker: 0, worker2: 0 };
  /** The API's cluster primary: start.mjs's child running the cluster entry. */
  const primaryPid = () => childrenRunning(start.pid!, 'apps/api/dist/cluster.js')[0];
  const apiPids = () => {
    const primary = primaryPid();
    return primary === undefined ? [] : childrenRunning(primary, 'apps/api/dist/main.js');
  };
  /** The API processes that answered 20 health checks, each on a new connection. */
  const answeringPids = async () => {
    const pids = new Set<number>();
    for (let i = 0; i < 20; i++) pids.add(await healthPid(port));
    pids.delete(0);
    return pids;
  };

  beforeAll(async () => {
    testEnv = await createTestEnv();
    port = await freePort();
    statusBefore = gitStatus();
    logOffsets.api = logSize('api');
    logOffsets.worker = logSize('worker');
    logOffsets.worker2 = logSize('worker-2');
    // The default log level and the default worker metrics port (moved by start.mjs if taken).
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      ...testEnv.env,
      PORT: String(port),
      API_INSTANCES: '2',
      WORKER_INSTANCES: '2',
    };
    delete env['LOG_LEVEL'];
    delete env['LOG_FORMAT'];
    delete env['WORKER_METRICS_PORT'];
    start = spawn(process.execPath, [join(ROOT, 'scripts', 'start.mjs')], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    start.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    start.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    client = new ApiClient(`http://127.0.0.1:${port}`);
    // start.mjs builds (incrementally), migrates and seeds first: give it time on a busy machine.
    await waitFor(
      'npm start to be up',
      async () => (output.includes('Flash sale is running') ? 'up' : start.exitCode === null ? 'starting' : 'exited'),
      (state) => state !== 'starting',
      240_000,
    );
    if (!output.includes('Flash sale is running')) throw new Error(`npm start did not come up:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 1_000)); // anything printed right after the banner
    outputAtStart = output;
  }, 300_000);

  afterAll(async () => {
    await client.close();
    if (start.exitCode === null) {
      start.kill('SIGINT');
      await exited(start);
    }
    await testEnv.cleanup();
  });

  it('a calm terminal: the banner last, under 60 lines with 100 purchases; access lines in .data/logs; clone clean', async () => {
    // The banner is the last thing a start prints, and names everything a newcomer looks for.
    const lines = outputAtStart.trimEnd().split('\n');
    expect(lines[lines.length - 1]).toBe('  Press Ctrl-C to stop.');
    const banner = outputAtStart.slice(outputAtStart.indexOf('Flash sale is running'));
    for (const shown of [
      /Storefront +http:\/\/localhost:\d+\n/,
      /Admin console +http:\/\/localhost:\d+\/admin\n/,
      /Admin password +\(the ADMIN_PASSWORD you set\)/,
      /Oversell demo +http:\/\/localhost:\d+\/admin\/demo/,
      /API docs +http:\/\/localhost:\d+\/docs/,
      /Queue board +http:\/\/localhost:\d+\/admin\/queues/,
      /Rate limits +load-test profile/,
      /Logs +\.data\/logs\/api\.log, \.data\/logs\/worker\.log, \.data\/logs\/worker-2\.log/,
      new RegExp(`Processes +2 API processes on port ${port} \\(node:cluster\\), 2 workers`),
    ]) {
      expect(banner).toMatch(shown);
    }
    // Each worker's metrics on a port of its own (the default and the next, or moved because taken) —
    // never a bind error.
    const workerMetrics =
      /Metrics +http:\/\/localhost:\d+\/metrics \(API, all its processes summed\), (http:\/\/127\.0\.0\.1:\d+\/metrics), (http:\/\/127\.0\.0\.1:\d+\/metrics) \(workers\)/.exec(
        banner,
      );
    expect(workerMetrics).not.toBeNull();
    expect(workerMetrics![1]).not.toBe(workerMetrics![2]);
    for (const url of [workerMetrics![1]!, workerMetrics![2]!]) {
      const scrape = await fetch(url);
      expect(scrape.status).toBe(200);
      expect(await scrape.text()).toContain('flash_sale_order_creation_seconds');
    }

    // The demo sale npm start seeds on an empty database is open at once: the first page can buy.
    const shop = await client.call<{ name: string; status: string }[]>('GET', '/api/sales');
    expect(shop.body.find((sale) => sale.name.startsWith('Demo flash sale'))?.status).toBe('live');
    expect(outputAtStart).toMatch(/seeded demo sale \S+ \(live, until /);

    const admin = await client.adminToken(testEnv.env['ADMIN_PASSWORD']!);
    const sale = await client.createSale(admin, { name: 'Calm', priceCents: 100, stock: 100 });
    // Each purchase names its request: the API logs every request that does (the others are sampled).
    const requestIds = Array.from({ length: 100 }, (_, i) => `calm-${sale.id}-${i}`);
    const statuses = await inBatches(requestIds, 10, async (requestId) => {
      const buyer = await client.guest();
      const token = await client.submitToken(sale.id, buyer.token);
      return (
        await client.call('POST', `/api/sales/${sale.id}/purchase`, {
          token: buyer.token,
          json: { token },
          headers: { 'x-request-id': requestId },
        })
      ).status;
    });
    expect(statuses).toEqual(Array(100).fill(202));
    await waitFor(
      'the 100 orders written',
      async () =>
        (
          await client.call<{ ordersByStatus: Record<string, number> }>('GET', `/api/admin/sales/${sale.id}/audit`, {
            token: admin,
          })
        ).body.ordersByStatus['PENDING_PAYMENT'],
      (written) => written === 100,
      30_000,
    );
    await new Promise((resolve) => setTimeout(resolve, 1_000)); // the logs' buffered writes

    const terminalLines = output.trimEnd().split('\n');
    if (terminalLines.length >= 60) throw new Error(`npm start printed ${terminalLines.length} lines:\n${output}`);
    expect(output).not.toMatch(/^\[?(api|worker)\]? ?\{/m); // no JSON line in the terminal
    expect(output).not.toMatch(/EADDRINUSE|vite v\d|\.js +\d+(\.\d+)? kB/); // no bind error, no chunk table

    // Every named request is in the API's log file as JSON, with its request id and status. Found by its
    // name: another test's `npm start` may log to the same file a purchase of a sale with the same id.
    const purchases = logSince('api', logOffsets.api)
      .split('\n')
      .filter((line) => line.includes(`/api/sales/${sale.id}/purchase`) && line.includes(`"reqId":"calm-${sale.id}-`))
      .map((line) => JSON.parse(line) as { reqId?: string; res?: { statusCode: number } });
    expect(purchases.map((entry) => entry.reqId).sort()).toEqual([...requestIds].sort());
    expect(purchases.every((entry) => entry.res?.statusCode === 202)).toBe(true);
    expect(logSince('worker', logOffsets.worker)).toContain('"service":"worker"');
    expect(logSince('worker-2', logOffsets.worker2)).toContain('"service":"worker"');

    // /metrics answers for both API processes at once: the 100 purchases were spread over them (the
    // client's connections went to one or the other), and the count is the sum.
    const scrape = await client.raw('GET', '/metrics');
    expect(scrape.status).toBe(200);
    const accepted = /^flash_sale_purchases_total\{outcome="accepted"\} (\d+)$/m.exec(scrape.text);
    expect(Number(accepted?.[1])).toBeGreaterThanOrEqual(100);

    // Installing, building, migrating and running left the clone as it was.
    expect(gitStatus()).toBe(statusBefore);
  }, 120_000);

  it('two API processes answer on the one port: the cluster primary’s two children', async () => {
    const children = apiPids();
    expect(children).toHaveLength(2);
    expect(await answeringPids()).toEqual(new Set(children));
  }, 30_000);

  it('a SIGKILLed API process is replaced while the other answers, the primary too (no orphan); the sale stays correct', async () => {
    const admin = await client.adminToken(testEnv.env['ADMIN_PASSWORD']!);
    const sale = await client.createSale(admin, { name: 'Supervised', priceCents: 100, stock: 30 });
    const saleId = sale.id;
    const buy = async () => {
      const buyer = await client.guest();
      const token = await client.submitToken(saleId, buyer.token);
      return (await client.call('POST', `/api/sales/${saleId}/purchase`, { token: buyer.token, json: { token } }))
        .status;
    };
    expect(await inBatches(Array.from({ length: 10 }), 5, buy)).toEqual(Array(10).fill(202));

    // One API process SIGKILLed: the other answers on the port while the cluster forks a replacement.
    const [killed, survivor] = apiPids();
    expect(survivor).toBeDefined();
    process.kill(killed!, 'SIGKILL');
    const killedAt = Date.now();
    // A health check every 50 ms for a second, each on a new connection, concurrently: none waits for
    // another. A connection node:cluster handed to the process in the instant it died is lost with it
    // (its client times out, as after any crash); every other one is answered by the survivor.
    const probes: Promise<number>[] = [];
    while (Date.now() - killedAt < 1_000) {
      probes.push(healthPid(port));
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const answeredBy = await Promise.all(probes);
    const bySurvivor = answeredBy.filter((pid) => pid === survivor).length;
    console.log(
      `one of two API processes SIGKILLed: ${bySurvivor} of ${answeredBy.length} checks answered by the other`,
    );
    expect(answeredBy).not.toContain(killed);
    expect(bySurvivor).toBeGreaterThanOrEqual(answeredBy.length - 2);
    const replaced = await waitFor(
      'a replacement API process',
      async () => apiPids(),
      (pids) => pids.length === 2 && !pids.includes(killed!),
      30_000,
    );
    console.log(`replacement API process up ${Date.now() - killedAt} ms after the kill`);
    expect(replaced).toContain(survivor);
    expect(
      await waitFor(
        'both answering',
        () => answeringPids(),
        (pids) => pids.size === 2,
        30_000,
      ),
    ).toEqual(new Set(replaced));
    expect(output).toMatch(/API process \d+ exited unexpectedly \(SIGKILL\); forking another in \d+ ms/);
    expect(await inBatches(Array.from({ length: 5 }), 5, buy)).toEqual(Array(5).fill(202));

    // The cluster's primary SIGKILLed: its processes end with it (none is left holding the port), and
    // the supervisor starts a new primary with new processes.
    const primary = primaryPid()!;
    const before = apiPids();
    // Requests that are logged (they name themselves), sent at once over several connections: each API
    // process holds log lines not yet written when its primary dies, and must not hang flushing them.
    const logged = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        client.call('GET', '/api/sales', { headers: { 'x-request-id': `before-primary-kill-${i}` } }),
      ),
    );
    expect(logged.every((response) => response.status === 200)).toBe(true);
    process.kill(primary, 'SIGKILL');
    await waitFor(
      'the old API processes gone',
      async () => before.filter(alive),
      (left) => left.length === 0,
      10_000,
    );
    await waitFor(
      'a new primary whose two processes answer',
      () => answeringPids(),
      (pids) => pids.size === 2 && before.every((pid) => !pids.has(pid)),
      60_000,
    );
    expect(primaryPid()).not.toBe(primary);
    expect(output).toMatch(/api exited unexpectedly \(SIGKILL\); restarting in \d+ ms/);

    expect(await inBatches(Array.from({ length: 10 }), 5, buy)).toEqual(Array(10).fill(202));
    const audit = await waitFor(
      'an ok audit',
      async () =>
        (
          await client.call<{ ok: boolean; ordersByStatus: Record<string, number> }>(
            'GET',
            `/api/admin/sales/${saleId}/audit`,
            { token: admin },
          )
        ).body,
      (body) => body.ok && body.ordersByStatus['PENDING_PAYMENT'] === 25,
      30_000,
    );
    expect(audit.ok).toBe(true);
  }, 120_000);

  it('Ctrl-C (SIGINT) stops every process it started: the primary, both API processes, both workers', async () => {
    const everything = descendants(start.pid!);
    expect(apiPids()).toHaveLength(2);
    expect(childrenRunning(start.pid!, 'apps/worker/dist/main.js')).toHaveLength(2);
    for (const pid of [primaryPid(), ...apiPids()]) expect(everything).toContain(pid);
    start.kill('SIGINT');
    expect(await exited(start)).toBe(0);
    expect(everything.filter(alive)).toEqual([]);
  }, 60_000);
});
