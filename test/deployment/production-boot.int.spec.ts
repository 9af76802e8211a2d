import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { DEVELOPMENT_SECRETS } from '@flash-sale/config';
import { ApiClient } from '../support/api-client';
import { waitFor } from '../support/fixtures';
import { freePort } from '../../scripts/lib/ports.mjs';
import { createTestEnv, productionSecrets, type TestEnv } from '../support/test-env';

const API_ENTRY = join(__dirname, '..', '..', 'apps', 'api', 'dist', 'main.js');
const WORKER_ENTRY = join(__dirname, '..', '..', 'apps', 'worker', 'dist', 'main.js');
const BOOT_TIMEOUT_MS = 30_000;

interface Run {
  child: ChildProcess;
  /** stdout and stderr as they come. */
  output: () => string;
  exit: Promise<number | null>;
}

/** A built entry point as a deployment runs it: only the given environment (and PATH), output kept. */
function run(entry: string, env: Record<string, string | undefined>): Run {
  const child = spawn(process.execPath, [entry], {
    env: { PATH: process.env['PATH'], LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => output, exit };
}

async function stop(app: Run | undefined): Promise<void> {
  if (!app || app.child.exitCode !== null || app.child.signalCode !== null) return;
  app.child.kill('SIGTERM');
  await app.exit;
}

async function answering(client: ApiClient, api: Run): Promise<void> {
  await waitFor(
    'the API to answer /health',
    () => client.call('GET', '/health').catch(() => ({ status: api.child.exitCode === null ? 0 : -1 })),
    (response) => response.status !== 0,
    BOOT_TIMEOUT_MS,
  );
  if (api.child.exitCode !== null) throw new Error(`the API exited:\n${api.output()}`);
}

/**
 * The API and the worker as built and deployed (`node apps/*\/dist/main.js`) with NODE_ENV=production:
 * each public or weak secret stops them at boot, non-zero, naming the variable; good secrets start them,
 * with /metrics behind METRICS_TOKEN, /docs off and the admin cookie Secure. Development keeps its
 * defaults and says so once.
 */
describe('production boot of the built API and worker (real processes, Redis, MariaDB)', () => {
  let testEnv: TestEnv;
  let production: Record<string, string>;

  beforeAll(async () => {
    for (const entry of [API_ENTRY, WORKER_ENTRY]) {
      if (!existsSync(entry)) throw new Error(`${entry} is missing: build first (npm test does)`);
    }
    testEnv = await createTestEnv();
    production = { ...testEnv.env, ...productionSecrets() };
  });

  afterAll(async () => {
    await testEnv?.cleanup();
  });

  const refusals: [string, Record<string, string | undefined>][] = [
    ['JWT_SECRET', { JWT_SECRET: undefined }],
    ['JWT_SECRET', { JWT_SECRET: 'x' }],
    ['JWT_SECRET', { JWT_SECRET: DEVELOPMENT_SECRETS.JWT_SECRET }],
    ['JWT_SECRET', { JWT_SECRET: '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08' }],
    ['PAYMENT_WEBHOOK_SECRET', { PAYMENT_WEBHOOK_SECRET: DEVELOPMENT_SECRETS.PAYMENT_WEBHOOK_SECRET }],
    ['PAYMENT_WEBHOOK_SECRET', { PAYMENT_WEBHOOK_SECRET: 'webhook' }],
    ['ADMIN_PASSWORD', { ADMIN_PASSWORD: DEVELOPMENT_SECRETS.ADMIN_PASSWORD }],
    ['ADMIN_PASSWORD', { ADMIN_PASSWORD: 'Password' }],
    ['ADMIN_PASSWORD', { ADMIN_PASSWORD: 'Sh0rt-but-new' }],
    ['METRICS_TOKEN', { METRICS_TOKEN: 'prometheus' }],
  ];

  it.each(refusals)('the API refuses to start with a weak or public %s: %j', async (name, change) => {
    const api = run(API_ENTRY, { ...production, PORT: String(await freePort()), ...change });
    const code = await api.exit;
    expect(code).not.toBe(0);
    expect(api.output()).toContain(`Configuration error: NODE_ENV=production needs strong secrets`);
    expect(api.output()).toMatch(new RegExp(`- ${name} `));
    expect(api.output()).toContain('openssl rand -base64 48');
  });

  it('the worker refuses the same secrets (it signs nothing, but shares the configuration)', async () => {
    const worker = run(WORKER_ENTRY, { ...production, WORKER_METRICS_PORT: '0', JWT_SECRET: 'x' });
    expect(await worker.exit).not.toBe(0);
    expect(worker.output()).toMatch(/- JWT_SECRET is too short/);
  });

  describe('with good secrets', () => {
    let api: Run;
    let worker: Run;
    let client: ApiClient;
    let workerMetrics: string;

    beforeAll(async () => {
      const port = await freePort();
      const metricsPort = await freePort();
      api = run(API_ENTRY, { ...production, PORT: String(port), HOST: '127.0.0.1' });
      worker = run(WORKER_ENTRY, { ...production, WORKER_METRICS_PORT: String(metricsPort) });
      client = new ApiClient(`http://127.0.0.1:${port}`);
      workerMetrics = `http://127.0.0.1:${metricsPort}/metrics`;
      await answering(client, api);
      await waitFor(
        "the worker's metrics endpoint",
        () =>
          fetch(workerMetrics).then(
            (response) => response.status,
            () => 0,
          ),
        (status) => status !== 0,
        BOOT_TIMEOUT_MS,
      );
    }, 2 * BOOT_TIMEOUT_MS);

    afterAll(async () => {
      await client?.close();
      await Promise.all([stop(api), stop(worker)]);
    });

    it('starts, silently about secrets, and signs in only with the configured admin password', async () => {
      expect((await client.call('GET', '/health')).status).toBe(200);
      expect(api.output()).not.toContain('Development mode');
      expect(worker.output()).not.toContain('Development mode');
      const withDefault = await client.call<{ error: { code: string } }>('POST', '/api/auth/admin', {
        json: { password: DEVELOPMENT_SECRETS.ADMIN_PASSWORD },
      });
      expect(withDefault.status).toBe(401);
      expect(withDefault.body.error.code).toBe('INVALID_CREDENTIALS');
      await expect(client.adminToken(production['ADMIN_PASSWORD']!)).resolves.toEqual(expect.any(String));
    });

    it("/metrics: 401 with the contract's body without the token or with another, 200 with it", async () => {
      const admin = await client.adminToken(production['ADMIN_PASSWORD']!);
      for (const token of [undefined, `${production['METRICS_TOKEN']}x`, admin]) {
        const refused = await client.raw('GET', '/metrics', token ? { token } : {});
        expect(refused.status).toBe(401);
        expect(JSON.parse(refused.text)).toEqual({ error: { code: 'UNAUTHENTICATED', message: expect.any(String) } });
        expect(refused.headers['www-authenticate']).toBe('Bearer realm="metrics"');
        expect(refused.headers['x-request-id']).toBeTruthy();
        expect(refused.headers['x-content-type-options']).toBe('nosniff');
        expect(refused.text).not.toContain('process_cpu');
      }
      const scraped = await client.raw('GET', '/metrics', { token: production['METRICS_TOKEN'] });
      expect(scraped.status).toBe(200);
      expect(scraped.text).toContain('process_cpu_user_seconds_total');
    });

    it("the worker's /metrics: 401 without the token, 200 with it", async () => {
      const refused = await fetch(workerMetrics);
      expect(refused.status).toBe(401);
      expect(await refused.json()).toEqual({ error: { code: 'UNAUTHENTICATED', message: expect.any(String) } });
      const wrong = await fetch(workerMetrics, { headers: { authorization: 'Bearer not-the-metrics-token' } });
      expect(wrong.status).toBe(401);
      const scraped = await fetch(workerMetrics, {
        headers: { authorization: `Bearer ${production['METRICS_TOKEN']}` },
      });
      expect(scraped.status).toBe(200);
      expect(await scraped.text()).toContain('flash_sale_order_creation_seconds');
    });

    it('/docs and /docs-json are off (404, the contract body)', async () => {
      for (const path of ['/docs', '/docs-json', '/docs/swagger-ui-init.js']) {
        const answer = await client.raw('GET', path);
        expect(answer.status).toBe(404);
        expect(JSON.parse(answer.text)).toMatchObject({ error: { code: 'NOT_FOUND' } });
      }
    });

    it('the queue-board cookie is Secure, HttpOnly, SameSite=Lax, scoped to the board; GET login is 404', async () => {
      const admin = await client.adminToken(production['ADMIN_PASSWORD']!);
      const login = await client.raw('POST', '/admin/queues/login', { token: admin });
      expect(login.status).toBe(204);
      const cookie = String(login.headers['set-cookie']);
      expect(cookie).toMatch(/^fs_admin=[^;]+;/);
      for (const attribute of ['Secure', 'HttpOnly', 'SameSite=Lax', 'Path=/admin/queues']) {
        expect(cookie.split('; ')).toContain(attribute);
      }
      // The token never travels in a URL: there is no GET login.
      expect((await client.raw('GET', `/admin/queues/login?token=${admin}`)).status).toBe(404);
      // The board itself stays admin-only.
      expect((await client.raw('GET', '/admin/queues')).status).toBe(401);
      expect((await client.raw('GET', '/admin/queues', { token: admin })).status).toBe(200);
    });
  });

  it('DOCS_ENABLED=true turns /docs on in production', async () => {
    const port = await freePort();
    const api = run(API_ENTRY, { ...production, PORT: String(port), DOCS_ENABLED: 'true' });
    const client = new ApiClient(`http://127.0.0.1:${port}`);
    try {
      await answering(client, api);
      expect((await client.raw('GET', '/docs')).status).toBe(200);
      expect((await client.raw('GET', '/docs-json')).status).toBe(200);
    } finally {
      await client.close();
      await stop(api);
    }
  });

  it('development keeps its defaults and says so once, in the API only; /metrics and /docs stay open', async () => {
    const development: Record<string, string | undefined> = {
      ...testEnv.env,
      JWT_SECRET: undefined,
      ADMIN_PASSWORD: undefined,
      PAYMENT_WEBHOOK_SECRET: undefined,
    };
    const port = await freePort();
    const api = run(API_ENTRY, { ...development, PORT: String(port) });
    const worker = run(WORKER_ENTRY, { ...development, WORKER_METRICS_PORT: '0' });
    const client = new ApiClient(`http://127.0.0.1:${port}`);
    try {
      await answering(client, api);
      await waitFor(
        'the worker',
        async () => worker.output(),
        (output) => output.includes('Worker consuming'),
        20_000,
      );
      const notices = api.output().match(/Development mode, not for deployment/g) ?? [];
      expect(notices).toHaveLength(1);
      expect(api.output()).toContain('JWT_SECRET, ADMIN_PASSWORD, PAYMENT_WEBHOOK_SECRET unset');
      expect(worker.output()).not.toContain('Development mode');
      await expect(client.adminToken(DEVELOPMENT_SECRETS.ADMIN_PASSWORD)).resolves.toEqual(expect.any(String));
      expect((await client.raw('GET', '/metrics')).status).toBe(200);
      expect((await client.raw('GET', '/docs')).status).toBe(200);
    } finally {
      await client.close();
      await Promise.all([stop(api), stop(worker)]);
    }
  });
});
