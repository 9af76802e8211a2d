import { createServer } from 'node:net';
import { Logger } from '@nestjs/common';
import { freePort } from '../../../../test/support/free-port';
import { WorkerMetricsServer } from './metrics-server';
import { WorkerMetrics } from './worker-metrics';

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
    const disabled = new WorkerMetricsServer(metrics, 0, '127.0.0.1');
    await disabled.onApplicationBootstrap();
    expect(disabled.boundPort()).toBeUndefined();

    const port = await freePort();
    const server = new WorkerMetricsServer(metrics, port, '127.0.0.1');
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

  it('a port already taken is logged and the worker starts anyway, without its endpoint', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as { port: number }).port;
    try {
      const server = new WorkerMetricsServer(new WorkerMetrics(), port, '127.0.0.1');
      await expect(server.onApplicationBootstrap()).resolves.toBeUndefined();
      expect(server.boundPort()).toBeUndefined();
      expect(logged[1]).toHaveBeenCalledWith(expect.stringContaining('EADDRINUSE'));
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });
});
