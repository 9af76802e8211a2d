import { randomBytes } from 'node:crypto';
import { type AppConfig, InjectAppConfig } from '@flash-sale/config';
import type { Sale, SubmitToken } from '@flash-sale/contract';
import { errorMessage, ErrorCode, type SaleLayout } from '@flash-sale/domain';
import { Injectable, Logger } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import { ADMIN_USER_ID } from '../auth/auth.service';
import { pool, SelfHttpClient } from '../common/self-http-client';
import { WarmUpSales } from './warm-up-sale';

/** Warm-up purchases in flight at once: enough to fill the pools the opening crowd will use. */
const CONCURRENCY = 16;
/** A warm-up that takes longer (a dependency that hangs) is given up: readiness must not wait on it. */
const GIVE_UP_AFTER_MS = 20_000;
/**
 * The warm-up sale's window: longer than any warm-up, so a warm-up sale that has ended is no process's
 * current one — a process that died during its warm-up left it, and the next warm-up removes it.
 */
const SALE_WINDOW_MS = 3 * GIVE_UP_AFTER_MS;
/** Buyers per unit of the warm-up sale: two in three buy, the last third are told `410 SOLD_OUT`. */
const BUYERS_PER_UNIT = 1.5;
/** Each buyer asks for a submit token, then buys with it. */
const REQUESTS_PER_BUYER = 2;

/**
 * Who the warm-up buys as: guests whose ids no sign-in gives (those are `u_<ulid>`), one per buyer, in
 * tokens this process signs. Ids of processes warming up at once never meet.
 */
const WARM_UP_CALLER_PREFIX = `warm-up-${randomBytes(6).toString('hex')}`;

interface WarmUpTally {
  sent: number;
  sold: number;
  soldOut: number;
  /** The submit tokens its buyers were given: removed with the sale. */
  tokens: { userId: string; token: string }[];
  /** The first answer that is neither: the warm-up stops there. */
  unexpected?: string;
}

/**
 * The opening second (docs/performance.md, "The opening second"): a sale's crowd arrives when the
 * processes have just started — code the JIT has not compiled, connections and pools not yet open — and
 * pays for all of it. So after the server listens and before `/health/ready` says ready (what load
 * balancers and `npm start` wait for), the process walks through its own front door, over loopback HTTP:
 * as an admin it creates a sale (purpose `warm-up`, the recommended strategy, the server's default
 * buckets); then WARM_UP_REQUESTS / 2 buyers, each a guest of its own, take a submit token and buy —
 * two in three are answered `202`, the rest `410 SOLD_OUT`, as in an opening. Every request takes the
 * path a buyer's takes (Node's HTTP server, Fastify, the hooks, the access token, the rate limits, the
 * reservation script, the lease refills, the sold-out proof and flag, the writers' nudge) and is
 * counted and logged like a buyer's. Then the sale is removed with everything it made (WarmUpSales).
 */
@Injectable()
export class StartupWarmUp {
  private readonly logger = new Logger(StartupWarmUp.name);
  private readonly requests: number;
  private warming = false;

  constructor(
    private readonly jwt: JwtService,
    private readonly sales: WarmUpSales,
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
    const buyers = Math.floor(this.requests / REQUESTS_PER_BUYER);
    if (buyers === 0) return;
    // Set before the first await: no request is answered between the listen and this line.
    this.warming = true;
    const startedAt = Date.now();
    const client = new SelfHttpClient(port, CONCURRENCY, GIVE_UP_AFTER_MS, host);
    let sale: SaleLayout | undefined;
    const tally: WarmUpTally = { sent: 0, sold: 0, soldOut: 0, tokens: [] };
    try {
      await this.sales.removeLeftovers();
      sale = await this.createSale(client, Math.max(1, Math.floor(buyers / BUYERS_PER_UNIT)));
      await this.buy(client, sale.id, buyers, startedAt + GIVE_UP_AFTER_MS, tally);
      const took = Date.now() - startedAt;
      if (tally.unexpected === undefined) {
        this.logger.log(
          `Purchase path warmed: ${tally.sent} requests (${tally.sold} purchases, ${tally.soldOut} told sold out) in ${took} ms`,
        );
      } else this.logger.warn(`Warm-up stopped after ${tally.sent} requests: ${tally.unexpected}`);
    } catch (error) {
      this.logger.warn(`Warm-up stopped, serving anyway: ${errorMessage(error)}`);
    } finally {
      client.close();
      if (sale) await this.sales.remove(sale, tally.tokens);
      this.warming = false;
    }
  }

  /** The warm-up sale, created as an admin creates one (`POST /api/admin/sales`). */
  private async createSale(client: SelfHttpClient, stock: number): Promise<SaleLayout> {
    const admin = await this.jwt.signAsync({ sub: ADMIN_USER_ID, name: 'Admin', role: 'admin' });
    const created = await client.call<Sale>('POST', '/admin/sales', admin, {
      name: 'Startup warm-up',
      priceCents: 100,
      stock,
      perUserLimit: 1,
      endsAt: new Date(Date.now() + SALE_WINDOW_MS).toISOString(),
      purpose: 'warm-up',
    });
    if (created.status !== 201) throw new Error(`creating the warm-up sale answered ${created.status}`);
    return { id: created.body.id, buckets: created.body.buckets };
  }

  /** `buyers` buyers, CONCURRENCY at a time, until they are done, one answers otherwise, or `deadline`. */
  private async buy(
    client: SelfHttpClient,
    saleId: string,
    buyers: number,
    deadline: number,
    tally: WarmUpTally,
  ): Promise<void> {
    const everyone = Array.from({ length: buyers }, (_, index) => index);
    await pool(everyone, CONCURRENCY, async (buyer) => {
      if (tally.unexpected !== undefined || Date.now() >= deadline) return;
      tally.unexpected ??= await this.buyOnce(client, saleId, buyer, tally);
    });
  }

  /** One buyer, a guest of its own: a submit token, then a purchase with it. */
  private async buyOnce(
    client: SelfHttpClient,
    saleId: string,
    buyer: number,
    tally: WarmUpTally,
  ): Promise<string | undefined> {
    const userId = `${WARM_UP_CALLER_PREFIX}-${buyer}`;
    const guest = await this.jwt.signAsync({
      sub: userId,
      name: 'warm-up',
      role: 'guest',
    });
    tally.sent += 1;
    const issued = await client.call<SubmitToken>('POST', `/sales/${saleId}/tokens`, guest, {});
    if (issued.status !== 201) return `a submit token answered ${issued.status}`;
    tally.tokens.push({ userId, token: issued.body.token });
    tally.sent += 1;
    const bought = await client.call<{ error?: { code?: string } }>('POST', `/sales/${saleId}/purchase`, guest, {
      token: issued.body.token,
    });
    if (bought.status === 202) tally.sold += 1;
    else if (bought.status === 410 && bought.body.error?.code === ErrorCode.SoldOut) tally.soldOut += 1;
    else return `a purchase answered ${bought.status}`;
    return undefined;
  }
}
