import { createServer } from 'node:net';
import { Logger } from '@nestjs/common';
import { freePort } from '../../../../scripts/lib/ports.mjs';
import { WorkerMetricsServer } from './metrics-server';
import { WorkerMetrics } from './worker-metrics';

const OPEN = { token: undefined, open: true };

describe('WorkerMetricsServer', () => {
  let logged: jest.SpyInstance[];

  beforeEach(() => {
    logged = (['log', 'error'] as const).map((level) =>
      jest.spyOn(Logger.prototype, level).mockImplementation(() => undefined),
    );
  });

  afterEach(() => logged.forEach((spy) => spy.mockRestore()));

  it('serves GET /metrics (404 elsewhere) and closes at shutdown; port 0 starts nothing', async () => {
    const metrics = new WorkerMetrics();
    metrics.observeCreated([
      {
        orderNo: 'S1-A',
        saleId: '1',
        userId: 'u',
        quantity: 1,
        slot: 1,
        reservedAt: new Date(),
        epoch: 1,
        submitToken: null,
      },
    ]);
    const disabled = new WorkerMetricsServer(metrics, 0, '127.0.0.1', OPEN);
    await disabled.onApplicationBootstrap();
    expect(disabled.boundPort()).toBeUndefined();

    const port = await freePort();
    const server = new WorkerMetricsServer(metrics, port, '127.0.0.1', OPEN);
    await server.onApplicationBootstrap();
    try {
      expect(server.boundPort()).toBe(port);
      const response = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(response.status).toBe(200);
      expect(await response.text()).toMatch(/^flash_sale_order_creation_seconds_count 1$/m);
      expect((await fetch(`http://127.0.0.1:${port}/`)).status).toBe(404);
    } finally {
      await server.onApplicationShutdown();
    }
    expect(server.boundPort()).toBeUndefined();
  });

  it('with a metrics token, a scrape without it or with another gets 401 and the error body; with it, 200', async () => {
    const port = await freePort();
    const token = 'Metrics-token-0123456789-abcdefghijklmnop';
    const server = new WorkerMetricsServer(new WorkerMetrics(), port, '127.0.0.1', { token, open: false });
    await server.onApplicationBootstrap();
    const scrape = (authorization?: string) =>
      fetch(`http://127.0.0.1:${port}/metrics`, { headers: authorization ? { authorization } : {} });
    try {
      for (const authorization of [undefined, `Bearer ${token}x`, `Basic ${token}`, `Bearer `]) {
        const refused = await scrape(authorization);
        expect(refused.status).toBe(401);
        expect(refused.headers.get('www-authenticate')).toBe('Bearer realm="metrics"');
        expect(await refused.json()).toEqual({ error: { code: 'UNAUTHENTICATED', message: expect.any(String) } });
      }
      const allowed = await scrape(`Bearer ${token}`);
      expect(allowed.status).toBe(200);
      expect(await allowed.text()).toContain('process_cpu_user_seconds_total');
    } finally {
      await server.onApplicationShutdown();
    }
  });

  it('closed without a token (production without METRICS_TOKEN): every scrape gets 401', async () => {
    const port = await freePort();
    const server = new WorkerMetricsServer(new WorkerMetrics(), port, '127.0.0.1', { token: undefined, open: false });
    await server.onApplicationBootstrap();
    try {
      const refused = await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { authorization: 'Bearer x' } });
      expect(refused.status).toBe(401);
      expect(((await refused.json()) as { error: { message: string } }).error.message).toContain('METRICS_TOKEN');
    } finally {
      await server.onApplicationShutdown();
    }
  });

  it('a port already taken is logged and the worker starts anyway, without its endpoint', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as { port: number }).port;
    try {
      const server = new WorkerMetricsServer(new WorkerMetrics(), port, '127.0.0.1', OPEN);
      await expect(server.onApplicationBootstrap()).resolves.toBeUndefined();
      expect(server.boundPort()).toBeUndefined();
      expect(logged[1]).toHaveBeenCalledWith(expect.stringContaining('EADDRINUSE'));
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });
});
