import { Agent, request } from 'node:http';
import { type AppConfig, InjectAppConfig } from '@flash-sale/config';
import type { SubmitToken } from '@flash-sale/contract';
import { errorMessage, WARM_UP_SALE_ID } from '@flash-sale/domain';
import { Injectable, Logger } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import { WARM_UP_CALLER_ID } from '../common/warm-up-caller';
import { PurchaseRehearsal } from './purchase-rehearsal';

/** Warm-up purchases in flight at once: enough to fill the pools the opening crowd will use. */
const CONCURRENCY = 16;
/** A warm-up that takes longer (a dependency that hangs) is given up: readiness must not wait on it. */
const GIVE_UP_AFTER_MS = 20_000;

/**
 * The opening second (docs/performance.md, "The opening second"): a sale's crowd arrives when the
 * processes have just started — code the JIT has not compiled, connections and pools not yet open — and
 * pays for all of it. So after the server listens and before `/health/ready` says ready (what load
 * balancers and `npm start` wait for), the process sends itself WARM_UP_REQUESTS requests over loopback
 * HTTP, through the whole stack a buyer's request takes: Node's HTTP server, Fastify, the route's hooks,
 * the access token, the body, the rate limits, the sale, the reservation script in Redis, the answer.
 * Two kinds, taking turns:
 * - buyers of the rehearsal sale (purchase-rehearsal.ts), each with a caller of their own: a submit
 *   token, then a purchase that reserves and is answered `202` — the success path;
 * - purchases and submit token requests in a sale that cannot exist: the unknown sale's `404` (or `429`
 *   once that caller's rate limit is spent), the sale read from MySQL, the error answer.
 *
 * Off the books: the callers are ones only this process can sign (common/warm-up-caller.ts); the
 * rehearsal sale exists for them alone, in Redis alone, and is deleted when the warm-up ends; its
 * purchases wake no writer, so no order is written. Warm-up requests are left out of the access log and of
 * the purchase metrics. What remains are rate-limit counters of those callers, which expire.
 */
@Injectable()
export class StartupWarmUp {
  private readonly logger = new Logger(StartupWarmUp.name);
  private readonly requests: number;
  private warming = false;

  constructor(
    private readonly jwt: JwtService,
    private readonly rehearsal: PurchaseRehearsal,
    @InjectAppConfig() config: AppConfig,
  ) {
    this.requests = config.ops.warmUpRequests;
  }

  /** Whether the process may report ready: no warm-up is running (main.ts runs it as soon as it listens). */
  get done(): boolean {
    return !this.warming;
  }

  /**
   * Runs the warm-up against the address the server listens on (`host` a wildcard: loopback); never
   * throws (a cold process still serves).
   */
  async run(host: string, port: number): Promise<void> {
    if (this.requests === 0) return;
    // Set before the first await: no request is answered between the listen and this line.
    this.warming = true;
    const startedAt = Date.now();
    const server: Loopback = { agent: new Agent({ keepAlive: true, maxSockets: CONCURRENCY }), host, port };
    const rehearsalSaleId = await this.rehearsal.open();
    try {
      const caller = await this.bearerOf(WARM_UP_CALLER_ID);
      // Well-formed bodies: a purchase's, and a submit token request's (no admission pass).
      const unknownSale = { purchase: JSON.stringify({ token: `warm-up-token-${WARM_UP_CALLER_ID}` }), tokens: '{}' };
      const deadline = startedAt + GIVE_UP_AFTER_MS;
      let sent = 0;
      let buyers = 0;
      let unexpected: string | undefined;
      // Any answer but the expected ones (a dependency down, load shed) ends the warm-up: a process that
      // cannot serve a purchase now has nothing to learn from more.
      const sender = async (): Promise<void> => {
        for (let turn = 0; sent < this.requests && unexpected === undefined && Date.now() < deadline; turn++) {
          if (rehearsalSaleId !== undefined && turn % 2 === 0 && sent + 2 <= this.requests) {
            sent += 2;
            unexpected ??= await this.buyOnce(server, rehearsalSaleId, buyers++);
            continue;
          }
          // Every fourth a submit token, as buyers ask for one before each purchase.
          const route = sent++ % 4 === 3 ? 'tokens' : 'purchase';
          const path = `/api/sales/${WARM_UP_SALE_ID}/${route}`;
          const { status } = await post(server, path, caller, unknownSale[route]);
          if (status !== 404 && status !== 429) unexpected ??= `the unknown sale's ${route} answered ${status}`;
        }
      };
      await Promise.all(Array.from({ length: CONCURRENCY }, sender));
      const took = Date.now() - startedAt;
      if (unexpected === undefined) {
        this.logger.log(`Purchase path warmed: ${sent} requests, ${buyers} rehearsed purchases, in ${took} ms`);
      } else this.logger.warn(`Warm-up stopped after ${sent} requests: ${unexpected}`);
    } catch (error) {
      this.logger.warn(`Warm-up stopped, serving anyway: ${errorMessage(error)}`);
    } finally {
      server.agent.destroy();
      if (rehearsalSaleId !== undefined) await this.rehearsal.close(rehearsalSaleId);
      this.warming = false;
    }
  }

  /** One buyer of the rehearsal sale, a caller of their own: a submit token, then a purchase with it. */
  private async buyOnce(server: Loopback, saleId: string, buyer: number): Promise<string | undefined> {
    const authorization = await this.bearerOf(`${WARM_UP_CALLER_ID}-${buyer}`);
    const issued = await post(server, `/api/sales/${saleId}/tokens`, authorization, '{}');
    if (issued.status !== 201) return `a rehearsal submit token answered ${issued.status}`;
    const { token } = JSON.parse(issued.body) as SubmitToken;
    const bought = await post(server, `/api/sales/${saleId}/purchase`, authorization, JSON.stringify({ token }));
    return bought.status === 202 ? undefined : `a rehearsal purchase answered ${bought.status}`;
  }

  private async bearerOf(callerId: string): Promise<string> {
    return `Bearer ${await this.jwt.signAsync({ sub: callerId, name: 'warm-up', role: 'guest' })}`;
  }
}

/** The process's own server, over kept-alive loopback connections. */
interface Loopback {
  readonly agent: Agent;
  readonly host: string;
  readonly port: number;
}

/** One POST over the kept-alive connections; resolves with the status and the body once the answer is read. */
function post(
  { agent, host, port }: Loopback,
  path: string,
  authorization: string,
  body: string,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      {
        agent,
        host,
        port,
        path,
        method: 'POST',
        headers: { authorization, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text }));
        response.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}
