import { DemoRunRepository } from '@flash-sale/db';
import type { Audit } from '@flash-sale/contract';
import { DomainError, ErrorCode, errorMessage } from '@flash-sale/domain';
import { Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { JwtService } from '@nestjs/jwt';
import { ulid } from 'ulid';
import { ADMIN_USER_ID } from '../auth/auth.service';
import { StockStrategies } from '../purchase/strategies/stock-strategies';
import { type CreateDemoRunDto, DEMO_DEFAULT_STRATEGIES } from './demo-run.dto';
import { type DemoRunReport, type DemoStrategyResult, emptyResult, percentile } from './demo-run.report';
import { pool, SelfHttpClient } from '../common/self-http-client';

/** Sockets the burst uses: enough concurrency for naive-unsafe's lost updates to show, bounded for a laptop. */
const BURST_CONNECTIONS = 64;
/** How long the queue may take to write a redis-lua sale's orders before the audit is read anyway. */
const SETTLE_TIMEOUT_MS = 30_000;
/** The whole run's budget; a strategy still going after it is marked failed. */
const RUN_TIMEOUT_MS = 180_000;
/**
 * A buyer told to try again (`retry-after`: nothing was done) does, as the storefront's buy flow does
 * (apps/web use-buy-flow.ts): with the same submit token, after the wait asked if it is at most
 * LONGEST_RETRY_WAIT_SECONDS, twice at most.
 */
const BUYER_RETRIES = 2;
const LONGEST_RETRY_WAIT_SECONDS = 10;
const LISTED_RUNS = 20;

/**
 * The oversell demonstration (docs/architecture.md "Strategies"): one sale per strategy, the same burst of
 * distinct buyers at each, fired by this process at its own port through the public API (admin
 * routes to create and audit, shopper routes to take a token and buy). The buyers' and the admin's
 * tokens are signed here rather than fetched, because that is all `POST /api/auth/guest` does and
 * sign-in routes are rate limited per IP. One run at a time per API instance.
 */
@Injectable()
export class DemoRunsService implements OnApplicationShutdown {
  private readonly logger = new Logger(DemoRunsService.name);
  /** Runs in progress on this instance, for live progress; finished runs are read from MySQL. */
  private readonly live = new Map<string, DemoRunReport>();
  private stopping = false;

  constructor(
    private readonly runs: DemoRunRepository,
    private readonly jwt: JwtService,
    private readonly adapterHost: HttpAdapterHost,
    private readonly strategies: StockStrategies,
  ) {}

  async start(input: CreateDemoRunDto): Promise<{ id: string }> {
    if (this.live.size > 0) {
      throw new DomainError(
        ErrorCode.Unavailable,
        'A demonstration is already running on this server; try again when it ends',
      );
    }
    const strategies = input.strategies ?? [...DEMO_DEFAULT_STRATEGIES];
    const report: DemoRunReport = {
      id: `demo_${ulid()}`,
      status: 'running',
      stock: input.stock,
      buyers: input.buyers,
      pauseLockHolder: input.pauseLockHolder ?? false,
      createdAt: new Date().toISOString(),
      finishedAt: null,
      results: strategies.map(emptyResult),
    };
    this.live.set(report.id, report);
    await this.save(report);
    void this.run(report).finally(() => this.live.delete(report.id));
    return { id: report.id };
  }

  async get(id: string): Promise<DemoRunReport> {
    const live = this.live.get(id);
    if (live) return live;
    const row = /^demo_[0-9A-Z]{26}$/.test(id) ? await this.runs.findById(id) : null;
    if (!row) throw new DomainError(ErrorCode.NotFound, `No demonstration ${id}`);
    return JSON.parse(row.report) as DemoRunReport;
  }

  async list(): Promise<DemoRunReport[]> {
    const rows = await this.runs.newestFirst(LISTED_RUNS);
    return rows.map((row) => this.live.get(row.id) ?? (JSON.parse(row.report) as DemoRunReport));
  }

  onApplicationShutdown(): void {
    this.stopping = true;
  }

  private async run(report: DemoRunReport): Promise<void> {
    const client = new SelfHttpClient(this.ownPort(), BURST_CONNECTIONS);
    const deadline = Date.now() + RUN_TIMEOUT_MS;
    try {
      const adminToken = await this.jwt.signAsync({ sub: ADMIN_USER_ID, name: 'Admin', role: 'admin' });
      for (const result of report.results) {
        if (this.stopping || Date.now() > deadline) {
          result.phase = 'failed';
          result.error = this.stopping ? 'the server is stopping' : 'the run took too long';
          continue;
        }
        try {
          await this.runStrategy(client, adminToken, report, result, deadline);
        } catch (error) {
          result.phase = 'failed';
          result.error = errorMessage(error);
        }
        await this.save(report);
      }
      report.status = report.results.every((result) => result.phase === 'done') ? 'finished' : 'failed';
    } catch (error) {
      report.status = 'failed';
      report.error = errorMessage(error);
      this.logger.error(`demonstration ${report.id} failed: ${report.error}`);
    } finally {
      client.close();
      report.finishedAt = new Date().toISOString();
      await this.save(report).catch((error: unknown) =>
        this.logger.error(`could not save ${report.id}: ${String(error)}`),
      );
    }
  }

  private async runStrategy(
    client: SelfHttpClient,
    adminToken: string,
    report: DemoRunReport,
    result: DemoStrategyResult,
    deadline: number,
  ): Promise<void> {
    result.phase = 'preparing';
    const created = await client.call<{ id: string }>('POST', '/admin/sales', adminToken, {
      name: `Oversell demo · ${result.strategy}`,
      description: `Demonstration ${report.id}: ${report.buyers} buyers at once for ${report.stock} units.`,
      priceCents: 100,
      stock: report.stock,
      perUserLimit: 1,
      endsAt: new Date(Date.now() + 15 * 60_000).toISOString(),
      strategy: result.strategy,
      paymentTimeoutSeconds: 600,
      purpose: 'demo', // test data: the storefront does not list it
    });
    if (created.status !== 201) throw new Error(`creating the sale answered ${created.status}`);
    const saleId = created.body.id;
    result.saleId = saleId;

    // Every buyer holds a submit token before the burst, so the burst is purchases only.
    const buyers = await Promise.all(
      Array.from({ length: report.buyers }, async (_, index) => ({
        jwt: await this.jwt.signAsync({ sub: `u_${ulid()}`, name: `Demo buyer ${index + 1}`, role: 'guest' }),
        submitToken: '',
      })),
    );
    await pool(buyers, BURST_CONNECTIONS, async (buyer) => {
      const token = await client.call<{ token: string }>('POST', `/sales/${saleId}/tokens`, buyer.jwt);
      if (token.status !== 201) throw new Error(`a submit token answered ${token.status}`);
      buyer.submitToken = token.body.token;
    });

    result.phase = 'buying';
    const latencies: number[] = [];
    const pauses = report.pauseLockHolder ? this.strategies.of(result.strategy).lockHolderPauses : undefined;
    await pauses?.arm(saleId, Math.max(1, deadline - Date.now()));
    const started = performance.now();
    try {
      await pool(buyers, BURST_CONNECTIONS, async (buyer) => {
        for (let retries = 0; ; retries++) {
          const answer = await client.call('POST', `/sales/${saleId}/purchase`, buyer.jwt, {
            token: buyer.submitToken,
          });
          latencies.push(answer.ms);
          if (retries === 0) result.sent += 1;
          const wait = answer.retryAfterSeconds;
          if (wait !== undefined && wait <= LONGEST_RETRY_WAIT_SECONDS && retries < BUYER_RETRIES) {
            if (retries === 0) result.retried += 1;
            await new Promise((resolve) => setTimeout(resolve, wait * 1000));
            continue;
          }
          if (answer.status === 201 || answer.status === 202) result.accepted += 1;
          else if (answer.status === 409 || answer.status === 410) result.refused += 1;
          else result.errors += 1;
          return;
        }
      });
    } finally {
      await pauses?.disarm(saleId);
    }
    const seconds = (performance.now() - started) / 1000;
    latencies.sort((a, b) => a - b);
    result.durationMs = Math.round(seconds * 1000);
    result.requestsPerSecond = Math.round(latencies.length / Math.max(seconds, 0.001));
    result.p50Ms = percentile(latencies, 0.5);
    result.p95Ms = percentile(latencies, 0.95);

    // redis-lua answers 202 before its orders are written: the audit is read once the queue drained.
    result.phase = 'settling';
    const settleBy = Math.min(deadline, Date.now() + SETTLE_TIMEOUT_MS);
    let audit: Audit | undefined;
    for (;;) {
      const answer = await client.call<Audit>('GET', `/admin/sales/${saleId}/audit`, adminToken);
      if (answer.status !== 200) throw new Error(`the audit answered ${answer.status}`);
      audit = answer.body;
      if (audit.ordersByStatus.QUEUED === 0 || Date.now() > settleBy) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    result.audit = {
      ok: audit.ok,
      stock: audit.stock,
      held: audit.held,
      oversold: audit.oversold,
      oversoldPeak: audit.oversoldPeak,
      duplicateOrders: audit.duplicateOrders,
      lostReservations: audit.lostReservations,
      ordersByStatus: audit.ordersByStatus,
    };
    result.oversold = audit.oversoldPeak;
    // The demo's sales end with the demonstration, so shoppers do not find them open in the shop.
    await client.call('PATCH', `/admin/sales/${saleId}`, adminToken, { endsAt: new Date().toISOString() });
    result.phase = 'done';
  }

  private ownPort(): number {
    const address = this.adapterHost.httpAdapter.getHttpServer().address() as { port?: number } | string | null;
    if (!address || typeof address === 'string' || !address.port)
      throw new Error('The API is not listening on a TCP port');
    return address.port;
  }

  private async save(report: DemoRunReport): Promise<void> {
    await this.runs.save({
      id: report.id,
      status: report.status,
      stock: report.stock,
      buyers: report.buyers,
      report: JSON.stringify(report),
      finishedAt: report.finishedAt ? new Date(report.finishedAt) : null,
    });
  }
}
