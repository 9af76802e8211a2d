import { type AppConfig, METRICS_CHALLENGE, metricsScrapeRefusal } from '@flash-sale/config';
import { ErrorCode, errorMessage } from '@flash-sale/domain';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { WorkerMetrics } from './worker-metrics';

/**
 * The worker has no HTTP server of its own: this tiny one answers `GET /metrics` for Prometheus on
 * WORKER_METRICS_PORT (0: not started). A port that cannot be bound (another worker on the same host)
 * is logged as an error, and the worker runs on without it: orders matter more than their metrics.
 * Scrapes are let in by the API's rule (METRICS_TOKEN; libs/config metrics-access.ts), and refused
 * with the API's 401 body.
 */
export class WorkerMetricsServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(WorkerMetricsServer.name);
  private server?: Server;

  constructor(
    private readonly metrics: WorkerMetrics,
    private readonly port: number,
    private readonly host: string,
    private readonly access: AppConfig['ops']['metrics'],
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (this.port === 0) return;
    const server = createServer((request, response) => {
      const path = (request.url ?? '').split('?')[0];
      if (request.method !== 'GET' || path !== '/metrics') {
        response.writeHead(404, { 'content-type': 'text/plain' }).end('Not found: try GET /metrics\n');
        return;
      }
      const refusal = metricsScrapeRefusal(this.access, request.headers.authorization);
      if (refusal !== undefined) {
        response
          .writeHead(401, { 'content-type': 'application/json; charset=utf-8', 'www-authenticate': METRICS_CHALLENGE })
          .end(JSON.stringify({ error: { code: ErrorCode.Unauthenticated, message: refusal } }));
        return;
      }
      this.metrics.registry.metrics().then(
        (body) => response.writeHead(200, { 'content-type': this.metrics.registry.contentType }).end(body),
        (error: unknown) => {
          this.logger.error(`Metrics scrape failed: ${errorMessage(error)}`);
          response.writeHead(500, { 'content-type': 'text/plain' }).end('Metrics unavailable\n');
        },
      );
    });
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(this.port, this.host, () => resolve());
      });
    } catch (error) {
      this.logger.error(`No metrics endpoint: cannot listen on ${this.host}:${this.port} (${errorMessage(error)})`);
      return;
    }
    this.server = server;
    this.logger.log(`Metrics on http://${this.host}:${this.boundPort()}/metrics`);
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** The port actually listened on (WORKER_METRICS_PORT), or undefined when disabled. */
  boundPort(): number | undefined {
    return (this.server?.address() as AddressInfo | null)?.port;
  }
}
