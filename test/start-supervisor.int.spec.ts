import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
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

/**
 * `npm start` (scripts/start.mjs) as a developer runs it, on this test's database and prefixes: the
 * API is SIGKILLed mid-sale, the supervisor starts it again within seconds, buying goes on and the
 * sale's audit is ok; Ctrl-C (SIGINT) still stops everything.
 */
describe('npm start supervises its children (real processes, MariaDB, Redis)', () => {
  let testEnv: TestEnv;
  let start: ChildProcess;
  let output = '';
  let client: ApiClient;

  beforeAll(async () => {
    testEnv = await createTestEnv();
    const port = await freePort();
    start = spawn(process.execPath, [join(ROOT, 'scripts', 'start.mjs')], {
      cwd: ROOT,
      env: { ...process.env, ...testEnv.env, PORT: String(port), LOG_LEVEL: 'warn' },
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
  }, 300_000);

  afterAll(async () => {
    await client.close();
    if (start.exitCode === null) {
      start.kill('SIGINT');
      await exited(start);
    }
    await testEnv.cleanup();
  });

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
