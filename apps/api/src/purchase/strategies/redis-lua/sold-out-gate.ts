import { type AppConfig, InjectAppConfig } from '@flash-sale/config';
import { SaleBuyerRepository } from '@flash-sale/db';
import { StockLeases } from '@flash-sale/stock';
import { decidePurchase, ErrorCode, type SaleTerms, type SaleLayout } from '@flash-sale/domain';
import { SaleState, type SoldOutView, StockReturnSubscription } from '@flash-sale/redis';
import { Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { SubmitTokens } from '../../submit-tokens';

/** Near the end of the window Redis's clock decides: SALE_ENDED (410) comes before SOLD_OUT. */
const END_MARGIN_MS = 2_000;
/** Beyond this many reservations, reading them all would cost Redis more than it saves. */
const MAX_RESERVATIONS = 50_000;

interface SoldOutFlag {
  /**
   * Everyone who ever reserved in the sale as Redis knows it, and every buyer MySQL holds an order of
   * (whatever Redis's copy lacks): their answer may be a replay (202/201) or LIMIT_REACHED. With no unit
   * left nobody can join them until units come back, which drops the flag.
   */
  reservedBy: Set<string>;
  until: number;
  sale: SaleLayout;
}

/**
 * The local "sold out" flag (docs/architecture.md, "Sold out: the local flag"): once Redis has answered
 * SOLD_OUT for a sale and holds no unit of it, this instance answers later buyers of that sale itself,
 * without a Redis command or a rate limit counted, but only where the purchase rules say the answer is
 * certainly 410. A flag is trusted only while the stock-return subscription is confirmed, is dropped by
 * every stock-return message, and lapses after SOLD_OUT_FLAG_TTL_MS unless renewed by the checks the
 * purchase path makes before its own SOLD_OUT: that document says why each rule is needed.
 */
@Injectable()
export class SoldOutGate implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(SoldOutGate.name);
  private readonly flags = new Map<string, SoldOutFlag>();
  /** The reading in progress per sale; it never rejects. */
  private readonly reading = new Map<string, Promise<void>>();
  /** Bumped by every subscription loss: a reading older than that is discarded. */
  private generation = 0;
  /** Per sale, bumped by every stock return: a reading of the sale older than that is discarded. */
  private readonly returns = new Map<string, number>();
  /** SOLD_OUT_FLAG_TTL_MS: how long a reading is trusted without a return message; 0 = never. */
  private readonly flagTtlMs: number;

  constructor(
    private readonly stockReturns: StockReturnSubscription,
    private readonly saleRedis: SaleState,
    private readonly leases: StockLeases,
    private readonly submitTokens: SubmitTokens,
    private readonly saleBuyers: SaleBuyerRepository,
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
    if (flag === undefined || flag.until <= now || !this.stockReturns.isLive()) return false;
    if (flag.until - now < this.flagTtlMs / 2) this.renew(saleId);
    return true;
  }

  /**
   * The reading that will set the sale's flag, while one is in progress and no flag is held: right after
   * Redis's first SOLD_OUT, the buyers arriving meanwhile wait for it (one round trip) rather than each
   * asking Redis, and then get the same answer they would have.
   */
  learning(saleId: string): Promise<void> | undefined {
    const flag = this.flags.get(saleId);
    return flag && flag.until > Date.now() ? undefined : this.reading.get(saleId);
  }

  /** True when Redis would certainly answer this purchase with 410 SOLD_OUT (see the class comment). */
  refuses(sale: SaleTerms, userId: string, submitToken: string, quantity: number, now = Date.now()): boolean {
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
      available: 0,
    });
    return decision.kind === 'refuse' && decision.code === ErrorCode.SoldOut;
  }

  /** Redis just answered SOLD_OUT for this sale: read its buyers once, in the background. */
  noteSoldOut(sale: SaleLayout): void {
    if (this.flagTtlMs === 0 || this.isFlagged(sale.id)) return;
    this.read(sale, async () => {
      // What renew asks too: a flag also makes Redis's SOLD_OUT final for every buyer, so none is set while
      // units are in doubt (an incarnation lost since the purchase path looked) or back in MySQL (settled
      // since, with no buyer yet to lease them to Redis: the flag would keep every buyer from doing so).
      if (await this.mySqlMaySellMore(sale.id)) return undefined;
      // MySQL before Redis: a lease recorded after this read announces its grant, which drops the reading.
      if ((await this.leases.leasesOnTheirWay(sale.id)) > 0) return undefined;
      return this.withMySqlBuyers(sale.id, await this.saleRedis.soldOutView(sale, MAX_RESERVATIONS));
    });
  }

  /**
   * Keeps a flag that is still true alive: what the purchase path checks before its SOLD_OUT, asked again
   * (nothing left in MySQL to lease, nothing in doubt), then Redis's stock — still 0, so nobody reserved
   * since and the buyers read before are all there are.
   */
  private renew(saleId: string): void {
    const flag = this.flags.get(saleId);
    if (!flag) return;
    const { reservedBy, sale } = flag;
    this.read(sale, async () => {
      if ((await this.leases.topUp(saleId)) > 0) return undefined; // the grant's message drops the flag
      if (await this.mySqlMaySellMore(saleId)) return undefined;
      if ((await this.leases.leasesOnTheirWay(saleId)) > 0) return undefined;
      const remaining = await this.saleRedis.remaining(sale);
      return this.withMySqlBuyers(saleId, remaining === undefined ? undefined : { remaining, reservedBy });
    });
  }

  /** Units in doubt, or in `available` again: the sale is not sold out whatever Redis's balance says. */
  private async mySqlMaySellMore(saleId: string): Promise<boolean> {
    const { inDoubt, available } = await this.leases.unsettledOrReturned(saleId);
    return inDoubt > 0 || available > 0;
  }

  /**
   * Adds the buyers of MySQL's orders, read after Redis: an order written while Redis was being read is
   * not missed. Beyond MAX_RESERVATIONS of them, no flag (as for Redis's reservations).
   */
  private async withMySqlBuyers(saleId: string, view: SoldOutView | undefined): Promise<SoldOutView | undefined> {
    if (view?.remaining !== 0) return view;
    const buyers = await this.saleBuyers.buyersWithOrders(saleId, MAX_RESERVATIONS);
    if (buyers === undefined) return undefined;
    for (const userId of buyers) view.reservedBy.add(userId);
    return view;
  }

  /**
   * One reading per sale at a time, off the request path. Kept only if the sale has no unit left and no
   * stock return (or subscription loss) happened since the reading began: units returned meanwhile may
   * be missing from it.
   */
  private read(sale: SaleLayout, reading: () => Promise<SoldOutView | undefined>): void {
    const saleId = sale.id;
    if (this.reading.has(saleId) || !this.stockReturns.isLive()) return;
    const generation = this.generation;
    const returns = this.returns.get(saleId);
    const done = reading()
      .then((view) => {
        const returned = returns !== this.returns.get(saleId);
        if (returned || generation !== this.generation || !this.stockReturns.isLive()) return;
        if (view?.remaining === 0) {
          this.flags.set(saleId, { reservedBy: view.reservedBy, until: Date.now() + this.flagTtlMs, sale });
        } else {
          this.flags.delete(saleId);
        }
      })
      .catch(() => {
        this.flags.delete(saleId); // no flag: every request asks Redis again
      })
      .finally(() => this.reading.delete(saleId));
    this.reading.set(saleId, done);
  }

  /** Units came back to the sale: ask Redis again. */
  private forget(saleId: string): void {
    this.returns.set(saleId, (this.returns.get(saleId) ?? 0) + 1);
    this.flags.delete(saleId);
  }

  private forgetAll(): void {
    this.generation += 1;
    this.flags.clear();
  }
}
