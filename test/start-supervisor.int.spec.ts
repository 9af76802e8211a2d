import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ApiClient, inBatches } from './support/api-client';
import { waitFor } from './support/fixtures';
import { freePort } from './support/free-port';
import { createTestEnv, type TestEnv } from './support/test-env';

const ROOT = join(__dirname, '..');

/** The pid of `start`'s child running `entry` (the API or the worker), if any. */
function childRunning(startPid: number, entry: string): number | undefined {
  const lines = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(startPid)], { encoding: 'utf8' });
  const line = lines.split('\n').find((candidate) => candidate.includes(entry));
  return line ? Number(line.trim().split(/\s+/)[0]) : undefined;
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
 * default log level: the terminal stays calm (the banner last, a few dozen lines for a start and 100
 * purchases, the access lines in .data/logs/) and the clone stays clean; the API is SIGKILLed
 * mid-sale, the supervisor starts it again within seconds, buying goes on and the sale's audit is ok;
 * Ctrl-C (SIGINT) still stops everything.
 */
describe('npm start supervises its children (real processes, MariaDB, Redis)', () => {
  let testEnv: TestEnv;
  let start: ChildProcess;
  let output = '';
  let outputAtStart = '';
  let client: ApiClient;
  let statusBefore: string;
  const logOffsets = { api: 0, worker: 0 };

  beforeAll(async () => {
    testEnv = await createTestEnv();
    const port = await freePort();
    statusBefore = gitStatus();
    logOffsets.api = logSize('api');
    logOffsets.worker = logSize('worker');
    // The default log level and the default worker metrics port (moved by start.mjs if taken).
    const env: NodeJS.ProcessEnv = { ...process.env, ...testEnv.env, PORT: String(port) };
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
      /Logs +\.data\/logs\/api\.log, \.data\/logs\/worker\.log/,
    ]) {
      expect(banner).toMatch(shown);
    }
    // The worker's metrics: on the default port, or moved because it was taken — never a bind error.
    const workerMetrics =
      /Metrics +http:\/\/localhost:\d+\/metrics \(API\), (http:\/\/127\.0\.0\.1:\d+\/metrics) \(worker\)/.exec(banner);
    expect(workerMetrics).not.toBeNull();
    expect((await fetch(workerMetrics![1]!)).status).toBe(200);

    const admin = await client.adminToken(testEnv.env['ADMIN_PASSWORD']!);
    const sale = await client.call<{ id: string }>('POST', '/api/admin/sales', {
      token: admin,
      json: { name: 'Calm', priceCents: 100, stock: 100, endsAt: new Date(Date.now() + 3_600_000).toISOString() },
    });
    // Each purchase names its request: the API logs every request that does (the others are sampled).
    const requestIds = Array.from({ length: 100 }, (_, i) => `calm-${sale.body.id}-${i}`);
    const statuses = await inBatches(requestIds, 10, async (requestId) => {
      const buyer = await client.guest();
      const token = await client.submitToken(sale.body.id, buyer.token);
      return (
        await client.call('POST', `/api/sales/${sale.body.id}/purchase`, {
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
          await client.call<{ ordersByStatus: Record<string, number> }>(
            'GET',
            `/api/admin/sales/${sale.body.id}/audit`,
            { token: admin },
          )
        ).body.ordersByStatus['PENDING_PAYMENT'],
      (written) => written === 100,
      30_000,
    );
    await new Promise((resolve) => setTimeout(resolve, 1_000)); // the logs' buffered writes

    const terminalLines = output.trimEnd().split('\n');
    if (terminalLines.length >= 60) throw new Error(`npm start printed ${terminalLines.length} lines:\n${output}`);
    expect(output).not.toMatch(/^\[?(api|worker)\]? ?\{/m); // no JSON line in the terminal
    expect(output).not.toMatch(/EADDRINUSE|vite v\d|\.js +\d+(\.\d+)? kB/); // no bind error, no chunk table

    // Every named request is in the API's log file as JSON, with its request id and status.
    const purchases = logSince('api', logOffsets.api)
      .split('\n')
      .filter((line) => line.includes(`/api/sales/${sale.body.id}/purchase`))
      .map((line) => JSON.parse(line) as { reqId?: string; res?: { statusCode: number } });
    expect(purchases.map((entry) => entry.reqId).sort()).toEqual([...requestIds].sort());
    expect(purchases.every((entry) => entry.res?.statusCode === 202)).toBe(true);
    expect(logSince('worker', logOffsets.worker)).toContain('"service":"worker"');

    // Installing, building, migrating and running left the clone as it was.
    expect(gitStatus()).toBe(statusBefore);
  }, 120_000);

  it('a SIGKILLed API is back within seconds, and the sale stays correct', async () => {
    const admin = await client.adminToken(testEnv.env['ADMIN_PASSWORD']!);
    const sale = await client.call<{ id: string }>('POST', '/api/admin/sales', {
      token: admin,
      json: { name: 'Supervised', priceCents: 100, stock: 30, endsAt: new Date(Date.now() + 3_600_000).toISOString() },
    });
    const saleId = sale.body.id;
    const buy = async () => {
      const buyer = await client.guest();
      const token = await client.submitToken(saleId, buyer.token);
      return (await client.call('POST', `/api/sales/${saleId}/purchase`, { token: buyer.token, json: { token } }))
        .status;
    };
    expect(await inBatches(Array.from({ length: 10 }), 5, buy)).toEqual(Array(10).fill(202));

    const apiPid = childRunning(start.pid!, 'apps/api/dist/main.js');
    expect(apiPid).toBeDefined();
    process.kill(apiPid!, 'SIGKILL');
    const killedAt = Date.now();
    await waitFor(
      'the API to answer again',
      async () => {
        try {
          return (await client.call('GET', '/api/sales')).status;
        } catch {
          return 0; // connection refused while it restarts
        }
      },
      (status) => status === 200,
      30_000,
    );
    const downMs = Date.now() - killedAt;
    console.log(`API SIGKILLed under npm start: answering again after ${downMs} ms`);
    expect(downMs).toBeLessThan(20_000);
    expect(childRunning(start.pid!, 'apps/api/dist/main.js')).not.toBe(apiPid);
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
      (body) => body.ok && body.ordersByStatus['PENDING_PAYMENT'] === 20,
      30_000,
    );
    expect(audit.ok).toBe(true);
  }, 120_000);

  it('Ctrl-C (SIGINT) stops everything it started', async () => {
    const children = [
      childRunning(start.pid!, 'apps/api/dist/main.js'),
      childRunning(start.pid!, 'apps/worker/dist/main.js'),
    ];
    expect(children.every(Boolean)).toBe(true);
    start.kill('SIGINT');
    expect(await exited(start)).toBe(0);
    for (const pid of children) expect(() => process.kill(pid!, 0)).toThrow();
  }, 60_000);
});
