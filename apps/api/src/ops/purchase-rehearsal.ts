import { SaleBuyerRepository } from '@flash-sale/db';
import { errorMessage } from '@flash-sale/domain';
import { onlyBucket, RedisConnection, ReservationScripts, SaleState, singleBucketSale } from '@flash-sale/redis';
import { Injectable, Logger } from '@nestjs/common';
import { withDeadline } from '../common/deadline';
import {
  newRehearsalSaleId,
  REHEARSAL_SALE_ID_RANGE,
  REHEARSAL_UNITS,
  rehearsalSaleFor,
  WARM_UP_CALLER_ID,
} from '../common/warm-up-caller';

/** The rehearsal sale's incarnation: it is loaded once and never reloaded. */
const REHEARSAL_EPOCH = 1;
/** How long the warm-up waits for Redis to take the rehearsal sale before warming without it. */
const OPEN_WITHIN_MS = 2_000;

/**
 * The sale the startup warm-up buys in, so that a purchase's success path — the reservation script
 * that reserves, the hand-off entry, the `202` — is compiled before the first buyer's (docs/performance.md,
 * "The opening second"). It exists in Redis only, for the warm-up's second: loaded and leased its units
 * here as MySQL would lease them, found by the warm-up's callers alone (common/warm-up-caller.ts), and
 * deleted with everything its purchases left — reservations, buyers, hand-off stream in Redis, and the
 * `sale_buyers` rows its submit tokens wrote in MySQL — when the warm-up ends. Its purchases are not
 * counted, and no writer is woken for them: no order is ever written.
 */
@Injectable()
export class PurchaseRehearsal {
  private readonly logger = new Logger(PurchaseRehearsal.name);

  constructor(
    private readonly redis: RedisConnection,
    private readonly scripts: ReservationScripts,
    private readonly saleRedis: SaleState,
    private readonly saleBuyers: SaleBuyerRepository,
  ) {}

  /**
   * A new rehearsal sale, loaded and leased in Redis; `undefined` when Redis cannot take it now (the
   * process has just started: its connection may still be opening, which is waited for a moment).
   */
  async open(): Promise<string | undefined> {
    const saleId = newRehearsalSaleId();
    const sale = rehearsalSaleFor(saleId, WARM_UP_CALLER_ID)!;
    const bucket = onlyBucket(saleId);
    // What a process killed during its warm-up left of its rehearsal (its submit tokens' buyer rows):
    // gone before this one writes its own.
    await this.saleBuyers
      .forgetSalesBetween(REHEARSAL_SALE_ID_RANGE.from, REHEARSAL_SALE_ID_RANGE.to)
      .catch((error: Error) => this.logger.warn(`Earlier rehearsals' buyers left in MySQL: ${errorMessage(error)}`));
    try {
      await withDeadline(this.redis.ping(), OPEN_WITHIN_MS, 'Redis');
      const window = {
        startsAt: sale.startsAt,
        endsAt: sale.endsAt,
        perUserLimit: sale.perUserLimit,
        windowVersion: 1,
      };
      await this.scripts.load(bucket, { ...window, stock: REHEARSAL_UNITS, epoch: REHEARSAL_EPOCH }, []);
      await this.scripts.grantLease(bucket, REHEARSAL_EPOCH, 'rehearsal', REHEARSAL_UNITS);
      return saleId;
    } catch (error) {
      this.logger.warn(`No rehearsal sale, warming without it: ${errorMessage(error)}`);
      await this.close(saleId);
      return undefined;
    }
  }

  /**
   * Deletes the rehearsal sale's keys and its buyers' rows. A process killed during its warm-up leaves
   * them: a few hundred reservations under an id no sale has, which nothing reads (no writer was woken for
   * them), and buyer rows, which the next process to warm up deletes (`open`).
   */
  async close(saleId: string): Promise<void> {
    try {
      await this.saleRedis.reset(singleBucketSale(saleId));
    } catch (error) {
      this.logger.warn(`Rehearsal sale ${saleId} left in Redis: ${errorMessage(error)}`);
    }
    try {
      await this.saleBuyers.forgetSale(saleId);
    } catch (error) {
      this.logger.warn(`Rehearsal sale ${saleId}'s buyers left in MySQL: ${errorMessage(error)}`);
    }
  }
}
