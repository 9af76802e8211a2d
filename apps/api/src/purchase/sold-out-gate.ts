import { type AppConfig, InjectAppConfig } from '@flash-sale/config';
import type { SaleEntity } from '@flash-sale/db';
import { decidePurchase, ErrorCode } from '@flash-sale/domain';
import { SaleRedisRepository, StockReturnSubscription } from '@flash-sale/redis';
import { Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { SubmitTokens } from './submit-tokens';

/** Near the end of the window Redis's clock decides: SALE_ENDED (410) comes before SOLD_OUT. */
const END_MARGIN_MS = 2_000;
/** Beyond this many reservations, reading them all would cost Redis more than it saves. */
const MAX_RESERVATIONS = 50_000;

interface SoldOutFlag {
  /** Units Redis had left when the flag was set: a purchase of more than this is refused. */
  remaining: number;
  /** Everyone who ever reserved in the sale: their answer may be a replay (202) or LIMIT_REACHED. */
  reservedBy: Set<string>;
  until: number;
}

/**
 * The short-lived local "sold out" flag docs/architecture.md allows ("Sold out: the local flag"): once
 * Redis has answered SOLD_OUT for a sale, this instance answers the next buyers of that sale itself,
 * without the reservation script's round trip — but only when the answer is certainly the one Redis would
 * give. It asks the purchase rules (libs/domain purchase-rules.ts) with what the flag knows, and answers
 * only a SOLD_OUT:
 *
 *   - the window: its end brought forward by a margin, since near it Redis's clock decides (the flag is
 *     only ever set on a started sale);
 *   - the submit token: signed for this sale and user and unexpired;
 *   - the replay and the per-user limit: asked only for a buyer who never reserved in this sale (such a
 *     buyer has no order to replay and holds no unit; anyone else goes to Redis);
 *   - the stock: the units Redis had left when the flag was set.
 *
 * Units only come back through a lease, whose grant script publishes the sale's id on a channel this
 * instance listens to: the flag is dropped at once, so a returned unit is sold again, and a buyer of it
 * replaying on this instance gets the replay. Losing the subscription drops every flag; the TTL bounds
 * what any missed message could cost. Every other request goes to Redis as before.
 *
 * Not covered: a submit token issued while Redis was down (the fallback) is unknown to Redis, which
 * would answer 403 where this answers 410 — a refusal either way.
 */
@Injectable()
export class SoldOutGate implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(SoldOutGate.name);
  private readonly flags = new Map<string, SoldOutFlag>();
  private readonly reading = new Set<string>();
  /** Bumped by every stock return and subscription loss: a reading older than that is discarded. */
  private generation = 0;
  /** SOLD_OUT_FLAG_TTL_MS: how long a reading is trusted without a return message; 0 = never. */
  private readonly flagTtlMs: number;

  constructor(
    private readonly stockReturns: StockReturnSubscription,
    private readonly saleRedis: SaleRedisRepository,
    private readonly submitTokens: SubmitTokens,
    @InjectAppConfig() config: AppConfig,
  ) {
    this.flagTtlMs = config.purchase.soldOutFlagTtlMs;
  }

  async onModuleInit(): Promise<void> {
    if (this.flagTtlMs === 0) return;
    this.stockReturns.onStockReturned((saleId) => this.forget(saleId));
    // While unsubscribed a return could go unnoticed: trust nothing read before.
    this.stockReturns.onLost(() => this.forgetAll());
    this.stockReturns.onError((error) => this.logger.warn(`Stock-return subscription: ${error.message}`));
    try {
      await this.stockReturns.open();
    } catch (error) {
      // Redis down at boot: no flag until the subscription is made.
      this.logger.warn(`Stock-return subscription pending: ${(error as Error).message}`);
    }
  }

  onModuleDestroy(): void {
    this.stockReturns.close();
  }

  /**
   * Whether this instance currently holds a sold-out flag for the sale: a map lookup, so callers ask it
   * before any costlier check (a live sale's purchases must not pay for the rest).
   */
  isFlagged(saleId: string, now = Date.now()): boolean {
    const flag = this.flags.get(saleId);
    // Redis not ready: the fallback decides (REDIS_FALLBACK), not a reading taken before.
    return flag !== undefined && flag.until > now && this.stockReturns.isLive();
  }

  /** True when Redis would certainly answer this purchase with 410 SOLD_OUT (see the class comment). */
  refuses(sale: SaleEntity, userId: string, submitToken: string, quantity: number, now = Date.now()): boolean {
    const flag = this.flags.get(sale.id);
    if (flag === undefined || !this.isFlagged(sale.id, now) || flag.reservedBy.has(userId)) return false;
    const decision = decidePurchase({
      userId,
      nowMs: now,
      startsAtMs: sale.startsAt.getTime(),
      endsAtMs: sale.endsAt.getTime() - END_MARGIN_MS,
      submitToken: { issuedToBuyer: this.submitTokens.verify(submitToken, sale.id, userId, now) },
      quantity,
      perUserLimit: sale.perUserLimit,
      unitsHeld: 0,
      available: flag.remaining,
    });
    return decision.kind === 'refuse' && decision.code === ErrorCode.SoldOut;
  }

  /** Redis just answered SOLD_OUT for this sale: read its stock and buyers once, in the background. */
  noteSoldOut(saleId: string): void {
    if (this.flagTtlMs === 0 || this.isFlagged(saleId) || this.reading.has(saleId) || !this.stockReturns.isLive()) {
      return;
    }
    this.reading.add(saleId);
    const generation = this.generation;
    this.saleRedis
      .soldOutView(saleId, MAX_RESERVATIONS)
      .then((view) => {
        if (view && generation === this.generation && this.stockReturns.isLive()) {
          this.flags.set(saleId, { ...view, until: Date.now() + this.flagTtlMs });
        }
      })
      .catch(() => undefined) // no flag: every request keeps asking Redis
      .finally(() => this.reading.delete(saleId));
  }

  /** Units came back to the sale: ask Redis again. */
  private forget(saleId: string): void {
    this.generation += 1;
    this.flags.delete(saleId);
  }

  private forgetAll(): void {
    this.generation += 1;
    this.flags.clear();
  }
}
