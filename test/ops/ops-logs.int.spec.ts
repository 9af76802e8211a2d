import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { createRedisClient, KeyBuilder, SaleLocks } from '@flash-sale/redis';
import { ApiClient } from '../support/api-client';
import { stopChild } from '../support/child-process';
import { waitFor } from '../support/fixtures';
import { freePort } from '../../scripts/lib/ports.mjs';
import { createTestEnv, type TestEnv } from '../support/test-env';

const API_ENTRY = join(__dirname, '..', '..', 'apps', 'api', 'dist', 'main.js');
const WORKER_ENTRY = join(__dirname, '..', '..', 'apps', 'worker', 'dist', 'main.js');

interface LogLine {
  level: string;
  time: string;
  service: string;
  msg: string;
  reqId?: string;
  context?: string;
  req?: { method: string; url: string };
  res?: { statusCode: number };
}

/** A built entry point, as production runs it, with every stdout line kept. */
function run(entry: string, env: Record<string, string>): { child: ChildProcess; lines: string[] } {
  const child = spawn(process.execPath, [entry], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  createInterface({ input: child.stdout! }).on('line', (line) => lines.push(line));
  child.stderr!.on('data', (chunk: Buffer) => process.stderr.write(`[${entry} ${child.pid}] ${chunk.toString()}`));
  return { child, lines };
}

/** JSON logs with the request id, from the real processes (the in-process test apps are silent). */
describe('logs of the built API and worker (real processes, Redis, MariaDB)', () => {
  let testEnv: TestEnv;
  let api: ReturnType<typeof run>;
  let worker: ReturnType<typeof run>;
  let client: ApiClient;
  let workerMetricsPort: number;

  const parsed = (lines: string[]) => lines.map((line) => JSON.parse(line) as LogLine);

  beforeAll(async () => {
    for (const entry of [API_ENTRY, WORKER_ENTRY]) {
      if (!existsSync(entry)) throw new Error(`${entry} is missing: build first (npm test does)`);
    }
    testEnv = await createTestEnv();
    const port = await freePort();
    workerMetricsPort = await freePort();
    // Leases of one unit: when Redis forgets the sale below, MySQL still has units for a new incarnation.
    // A short wait for a redis-lock sale's lock: the busy-lock 503 below comes at once.
    const env = {
      ...testEnv.env,
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      LOG_PRETTY: '0',
      LEASE_SIZE: '1',
      PURCHASE_LOCK_WAIT_MS: '200',
    };
    api = run(API_ENTRY, { ...env, PORT: String(port) });
    worker = run(WORKER_ENTRY, { ...env, WORKER_METRICS_PORT: String(workerMetricsPort) });
    client = new ApiClient(`http://127.0.0.1:${port}`);
    await waitFor(
      'the API',
      () => client.call('GET', '/health').catch(() => ({ status: 0 })),
      (response) => response.status === 200,
      30_000,
    );
    await waitFor(
      'the worker metrics endpoint',
      () =>
        fetch(`http://127.0.0.1:${workerMetricsPort}/metrics`).then(
          (r) => r.status,
          () => 0,
        ),
      (status) => status === 200,
      30_000,
    );
  });

  afterAll(async () => {
    await client?.close();
    await Promise.all([api && stopChild(api.child, 'SIGTERM'), worker && stopChild(worker.child, 'SIGTERM')]);
    await testEnv?.cleanup();
  });

  it('every line is JSON; each request has a completion line and in-request lines carrying its x-request-id', async () => {
    const admin = await client.adminToken(testEnv.env['ADMIN_PASSWORD']!);
    const sale = await client.createSale(admin, { name: 'Logged', priceCents: 100, stock: 3 });
    const buyer = await client.guest();
    const token = await client.submitToken(sale.id, buyer.token);
    // Redis forgets the sale: the purchase logs a warning (from inside the request) while it reloads it.
    const redis = createRedisClient(testEnv.config.redis);
    await redis.del(...new KeyBuilder(testEnv.config.redis.keyPrefix).sale(sale.id).all());
    redis.disconnect();

    const requestId = `ops-log-test-${Date.now()}`;
    const purchase = await client.call('POST', `/api/sales/${sale.id}/purchase`, {
      token: buyer.token,
      json: { token },
      headers: { 'x-request-id': requestId },
    });
    expect(purchase.status).toBe(202);
    expect(purchase.headers['x-request-id']).toBe(requestId);

    const ofRequest = await waitFor(
      'the request log lines',
      async () => parsed(api.lines).filter((line) => line.reqId === requestId),
      (lines) => lines.some((line) => line.msg === 'request completed'),
      10_000,
    );
    expect(ofRequest.find((line) => line.msg === 'request completed')).toMatchObject({
      level: 'info',
      service: 'api',
      req: { method: 'POST', url: `/api/sales/${sale.id}/purchase` },
      res: { statusCode: 202 },
    });
    expect(ofRequest.find((line) => line.context === 'RedisReservation')).toMatchObject({
      level: 'warn',
      msg: expect.stringContaining('was not loaded in Redis'),
    });

    // The purchase route's ordinary answers are sampled (PURCHASE_ACCESS_LOG_PERCENT, 1 %): these three
    // refusals, without an x-request-id of the caller's, get no line (the 1st of every 100 would).
    const refusedIds: string[] = [];
    for (let i = 0; i < 3; i++) {
      const refused = await client.call('POST', `/api/sales/${sale.id}/purchase`, {
        token: buyer.token,
        json: { token: 'short' },
      });
      expect(refused.status).toBe(400);
      refusedIds.push(String(refused.headers['x-request-id']));
    }
    // So are the waiting room's joins and polls (here refused: this sale has no room).
    for (const method of ['POST', 'GET', 'GET'] as const) {
      const polled = await client.call(method, `/api/sales/${sale.id}/queue`, { token: buyer.token });
      expect(polled.status).toBe(409);
      refusedIds.push(String(polled.headers['x-request-id']));
    }

    // The dashboard login takes the token in a header, which is never logged; a token someone still
    // puts in a query string (the login once took it there) is redacted: the log keeps the path only.
    expect((await client.raw('POST', '/admin/queues/login', { token: admin })).status).toBe(204);
    expect((await client.raw('GET', `/admin/queues/login?token=${admin}`)).status).toBe(404);
    await waitFor(
      'the login log line',
      async () => parsed(api.lines),
      (lines) => lines.some((line) => line.req?.url === '/admin/queues/login?token=[redacted]'),
      10_000,
    );

    const all = parsed(api.lines); // throws if any line is not JSON
    // Logged after the refusals above (the login): they would be there by now.
    expect(all.filter((line) => line.reqId !== undefined && refusedIds.includes(line.reqId))).toEqual([]);
    expect(all.every((line) => typeof line.level === 'string' && !Number.isNaN(Date.parse(line.time)))).toBe(true);
    // Headers (bearer tokens) never reach the logs; probes do not flood them.
    expect(api.lines.join('\n')).not.toContain(buyer.token);
    expect(api.lines.join('\n')).not.toContain(admin);
    expect(all.some((line) => line.req?.url === '/health')).toBe(false);
  });

  it('a refusal the contract calls correct is not an error line: 503 + retry-after (busy lock), 410, 409', async () => {
    const admin = await client.adminToken(testEnv.env['ADMIN_PASSWORD']!);
    const sale = await client.createSale(admin, {
      name: 'Busy lock',
      priceCents: 100,
      stock: 1,
      strategy: 'redis-lock',
    });
    const named = (what: string) => `ops-log-refusal-${sale.id}-${what}`;
    const buy = async (buyer: { token: string }, what: string) =>
      client.call('POST', `/api/sales/${sale.id}/purchase`, {
        token: buyer.token,
        json: { token: await client.submitToken(sale.id, buyer.token) },
        headers: { 'x-request-id': named(what) },
      });

    // The sale's lock held elsewhere beyond the API's wait: `503` + `retry-after`, "nothing was sold, try again".
    const redis = createRedisClient(testEnv.config.redis);
    const holding = await new SaleLocks(redis, new KeyBuilder(testEnv.config.redis.keyPrefix)).tryAcquire(
      sale.id,
      5_000,
    );
    const first = await client.guest();
    let busy;
    try {
      busy = await buy(first, 'busy');
    } finally {
      await holding!.release();
      redis.disconnect();
    }
    expect([busy.status, busy.headers['retry-after']]).toEqual([503, '1']);
    expect((await buy(first, 'bought')).status).toBe(201);
    expect((await buy(first, 'limit')).status).toBe(409);
    expect((await buy(await client.guest(), 'sold-out')).status).toBe(410);

    const completed = await waitFor(
      'the refusals’ access lines',
      async () =>
        parsed(api.lines).filter((line) => line.msg === 'request completed' && line.reqId?.startsWith(named(''))),
      (lines) => lines.length === 4,
      10_000,
    );
    expect(Object.fromEntries(completed.map((line) => [line.reqId, [line.res?.statusCode, line.level]]))).toEqual({
      [named('busy')]: [503, 'info'],
      [named('bought')]: [201, 'info'],
      [named('limit')]: [409, 'info'],
      [named('sold-out')]: [410, 'info'],
    });
    // Nor any other line of theirs: `npm start`'s terminal, which shows warnings and errors, stays quiet.
    const ofRefusals = parsed(api.lines).filter((line) => line.reqId?.startsWith(named('')));
    expect(ofRefusals.filter((line) => line.level !== 'info')).toEqual([]);
  });

  it('the worker logs JSON too, and its metrics endpoint records the order bought above', async () => {
    await waitFor(
      'an order written by the worker',
      async () => (await fetch(`http://127.0.0.1:${workerMetricsPort}/metrics`)).text(),
      (metrics) => /^flash_sale_order_creation_seconds_count [1-9]/m.test(metrics),
      20_000,
    );
    const lines = parsed(worker.lines);
    expect(lines.find((line) => line.msg.startsWith('Worker consuming'))).toMatchObject({
      level: 'info',
      service: 'worker',
      context: 'Worker',
    });
  });
});
