import { Agent, request } from 'node:http';
import { type AppConfig, InjectAppConfig } from '@flash-sale/config';
import { errorMessage, WARM_UP_SALE_ID } from '@flash-sale/domain';
import { Injectable, Logger } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import { WARM_UP_CALLER_ID } from '../common/warm-up-caller';

/** Warm-up purchases in flight at once: enough to fill the pools the opening crowd will use. */
const CONCURRENCY = 16;
/** A warm-up that takes longer (a dependency that hangs) is given up: readiness must not wait on it. */
const GIVE_UP_AFTER_MS = 20_000;

/**
 * The opening second (docs/performance.md, "The opening second"): a sale's crowd arrives when the
 * processes have just started — code the JIT has not compiled, connections and pools not yet open — and
 * pays for all of it. So after the server listens and before `/health/ready` says ready (what load
 * balancers and `npm start` wait for), the process sends itself WARM_UP_REQUESTS purchases (and a submit
 * token request for every three) over loopback HTTP, through the whole stack a buyer's purchase takes: Node's HTTP server, Fastify, the
 * route's hooks, the access token, the body, the sold-out gate, the sale read from MySQL, the rate-limit
 * script in Redis, the error answer.
 *
 * Off the books: the buyer is a caller only this process can sign (common/warm-up-caller.ts) and the sale
 * one that cannot exist, so no sale, order or reservation is made; its requests are left out of the access
 * log and of the purchase metrics. What remains are rate-limit counters of that caller, which expire.
 */
@Injectable()
export class StartupWarmUp {
  private readonly logger = new Logger(StartupWarmUp.name);
  private readonly requests: number;
  private warming = false;

  constructor(
    private readonly jwt: JwtService,
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
    const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
    try {
      const authorization = `Bearer ${await this.jwt.signAsync({ sub: WARM_UP_CALLER_ID, name: 'warm-up', role: 'guest' })}`;
      // Well-formed bodies: a purchase's, and a submit token request's (no admission pass).
      const bodies = { purchase: JSON.stringify({ token: `warm-up-token-${WARM_UP_CALLER_ID}` }), tokens: '{}' };
      const deadline = startedAt + GIVE_UP_AFTER_MS;
      let sent = 0;
      let unexpected: number | undefined;
      const sender = async (): Promise<void> => {
        // The unknown sale's 404, or 429 once the caller's purchase rate limit is spent (the same path: the
        // limit is counted after the sale is looked for). Any other answer (a dependency down, load shed)
        // ends the warm-up: a process that cannot serve a purchase now has nothing to learn from more.
        while (sent < this.requests && unexpected === undefined && Date.now() < deadline) {
          // Every fourth a submit token, as buyers ask for one before each purchase.
          const route = sent++ % 4 === 3 ? 'tokens' : 'purchase';
          const path = `/api/sales/${WARM_UP_SALE_ID}/${route}`;
          const status = await post(agent, host, port, path, authorization, bodies[route]);
          if (status !== 404 && status !== 429) unexpected ??= status;
        }
      };
      await Promise.all(Array.from({ length: CONCURRENCY }, sender));
      const took = Date.now() - startedAt;
      if (unexpected === undefined) this.logger.log(`Purchase path warmed: ${sent} requests in ${took} ms`);
      else this.logger.warn(`Warm-up stopped after ${sent} requests: one was answered ${unexpected}`);
    } catch (error) {
      this.logger.warn(`Warm-up stopped, serving anyway: ${errorMessage(error)}`);
    } finally {
      agent.destroy();
      this.warming = false;
    }
  }
}

/** One POST over the agent's kept-alive connections; resolves with the status once the answer is read. */
function post(
  agent: Agent,
  host: string,
  port: number,
  path: string,
  authorization: string,
  body: string,
): Promise<number> {
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
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
        response.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}
