import { type AppConfig, InjectAppConfig } from '@flash-sale/config';
import { SaleLayouts } from '@flash-sale/db';
import { HandoffStream, SaleState } from '@flash-sale/redis';
import { Injectable } from '@nestjs/common';

/**
 * Redis holds a sale only while it can matter: once a Redis-backed sale has ended and every
 * reservation of it is written (its hand-off backlog is empty), all its keys get an expiry at its end
 * + SALE_REDIS_RETENTION_MS, so replays, support lookups and late repairs still find them for a while
 * and Redis does not grow with every sale ever run. The one place that decides it; idempotent (the
 * expiry is a fixed instant). Nothing takes the keys' absence afterwards for a lost incarnation:
 * StockLeases never restarts an ended sale. A sale whose end moves into the future again gets its
 * keys back without expiry when it is loaded (StockLeases).
 */
@Injectable()
export class SaleRetention {
  constructor(
    private readonly saleRedis: SaleState,
    private readonly handoff: HandoffStream,
    private readonly layouts: SaleLayouts,
    @InjectAppConfig() private readonly config: AppConfig,
  ) {}

  /** Sets the expiry if the sale has ended and nothing of it waits to be written; returns whether it did. */
  async retireIfWritten(saleId: string, endsAt: Date, now = Date.now()): Promise<boolean> {
    if (endsAt.getTime() > now) return false;
    const sale = await this.layouts.of(saleId);
    if ((await this.handoff.backlog(sale)) > 0) return false;
    await this.saleRedis.expireAt(sale, this.expiresAt(endsAt));
    return true;
  }

  /** When an ended sale's keys leave Redis. */
  private expiresAt(endsAt: Date): number {
    return endsAt.getTime() + this.config.lifecycle.saleRedisRetentionMs;
  }
}
