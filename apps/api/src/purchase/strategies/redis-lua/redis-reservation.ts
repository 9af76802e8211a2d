import { ErrorCode, OrderNumberGenerator, type SaleTerms } from '@flash-sale/domain';
import { StockLeases } from '@flash-sale/stock';
import { buyerBucket, ReservationScripts, type ReserveResult, type SaleBucket } from '@flash-sale/redis';
import { Injectable, Logger } from '@nestjs/common';
import { MetricsService } from '../../../metrics/metrics.service';
import { PurchaseRateLimits } from '../../../protection/purchase-rate-limits';
import { rateLimited } from '../../../protection/retry-later.error';
import { IncarnationGuard } from './incarnation-guard';
import type { PurchaseOrder } from '../../purchase-body';
import type { PurchaseAccepted } from '../../stock-strategy';
import { refusal, retryLater } from '../../refusals';
import { type Reserved, ReservationFollowUp } from './reservation-follow-up';
import { SoldOutGate } from './sold-out-gate';
import { SubmitTokens } from '../../submit-tokens';
import { TokenOrders, type WrittenOrder } from '../../token-orders';
import { RedisTokens } from './redis-tokens';

/**
 * A fresh order number collides (~2^-80), a Redis reload races us, or leases refilled the balance a
 * moment after it ran dry: a few tries are plenty.
 */
const MAX_RESERVE_ATTEMPTS = 4;

/** Verifications in a row, each ended by another lost connection, before the buyer is asked to retry. */
const MAX_VERIFY_ROUNDS = 3;

type Refused = Extract<ReserveResult, { kind: 'refused' }>;

/** What one purchase learned between its attempts. */
interface Attempts {
  readonly sale: SaleTerms;
  readonly userId: string;
  readonly order: PurchaseOrder;
  readonly bucket: SaleBucket;
  /** A valid token unknown to Redis was put there once; it is not put there twice. */
  adoptedToken: boolean;
  /** MySQL had nothing left to lease (nor the other buckets to give back) after a SOLD_OUT. */
  mysqlWasEmpty: boolean;
  /** The token's own order number was found taken (a collision, ~2^-80): random ones from then on. */
  tokenNumberTaken: boolean;
  /** The master the last script was sent to, as the slot map said then (for the durable acknowledgement). */
  writtenOn?: string;
}

/** After a refusal: try again, or the purchase's answer (a replayed order). A final refusal is thrown. */
type Next = 'retry' | WrittenOrder;

/**
 * The redis-lua purchase (docs/architecture.md, "The purchase path"): one reservation script checks the
 * submit token, the per-user limit, the rate limits and the leased balance, reserves the units and
 * hands the order to the sale's writer, atomically. Its refusals that are not final are resolved here
 * and the script asked again: a sale Redis lost is reloaded from MySQL, a balance that ran dry is
 * refilled from MySQL (or the sale's other buckets) before SOLD_OUT is said, and a valid token Redis
 * does not know is adopted when MySQL has no order with it.
 */
@Injectable()
export class RedisReservation {
  private readonly logger = new Logger(RedisReservation.name);
  private readonly orderNumbers = new OrderNumberGenerator();

  constructor(
    private readonly scripts: ReservationScripts,
    private readonly leases: StockLeases,
    private readonly rateLimits: PurchaseRateLimits,
    private readonly tokens: SubmitTokens,
    private readonly tokenOrders: TokenOrders,
    private readonly redisTokens: RedisTokens,
    private readonly soldOut: SoldOutGate,
    private readonly incarnations: IncarnationGuard,
    private readonly followUp: ReservationFollowUp,
    private readonly metrics: MetricsService,
  ) {}

  async reserve(sale: SaleTerms, userId: string, order: PurchaseOrder): Promise<PurchaseAccepted> {
    // The buyer's records and their share of the stock live in one bucket (docs/architecture.md, "Hot sales").
    const attempts: Attempts = {
      sale,
      userId,
      order,
      bucket: buyerBucket(sale, userId),
      adoptedToken: false,
      mysqlWasEmpty: false,
      tokenNumberTaken: false,
    };
    for (let attempt = 1; attempt <= MAX_RESERVE_ATTEMPTS; attempt++) {
      // Every try, not only the first: the awaits between tries (a top-up, a load, a token adoption) are
      // long enough for Redis to come back from an older copy of its data. Nothing is awaited between
      // this check and the script's send, and a connection lost after it fails the script (unknown
      // outcome) rather than resending it to the Redis that came back.
      if (this.incarnations.mustVerify(sale.id)) await this.untilVerified(sale.id);
      const result = await this.runScript(attempts, attempt === 1);
      switch (result.kind) {
        case 'reserved':
        case 'replayed':
          return this.accepted(attempts, result);
        case 'order-number-taken':
          attempts.tokenNumberTaken = true;
          continue;
        case 'rate-limited':
          throw rateLimited(result.waitMs);
        case 'refused': {
          if (attempt === MAX_RESERVE_ATTEMPTS) {
            if (result.code !== ErrorCode.SoldOut) return this.finalRefusal(attempts, result.code);
            // Units kept arriving and going to others, or Redis lost the sale again: not known to be sold
            // out, so not SOLD_OUT. Otherwise proven as on any other try.
            if (result.saleNotLoaded || !attempts.mysqlWasEmpty) break;
            return this.soldOutUnlessInDoubt(attempts);
          }
          const next = await this.afterRefusal(attempts, result);
          if (next !== 'retry') return next;
        }
      }
    }
    throw retryLater('Could not reserve right now; retry with the same token');
  }

  /** Verifies the sale's incarnation on the current connection; a connection lost meanwhile asks again. */
  private async untilVerified(saleId: string): Promise<void> {
    for (let round = 1; this.incarnations.mustVerify(saleId); round++) {
      if (round > MAX_VERIFY_ROUNDS) throw retryLater('Redis keeps reconnecting; retry with the same token');
      await this.incarnations.verify(saleId);
    }
  }

  private async runScript(attempts: Attempts, first: boolean): Promise<ReserveResult> {
    const { sale, userId, order, bucket } = attempts;
    const timer = this.metrics.reservationTimer();
    attempts.writtenOn = this.followUp.masterOf(bucket);
    const result = await this.scripts.reserve({
      bucket,
      userId,
      submitToken: order.token,
      quantity: order.quantity,
      // The token's own number, so a reservation Redis lost is made again under the number promised.
      orderNo: attempts.tokenNumberTaken
        ? this.orderNumbers.next(sale.id)
        : this.tokens.orderNumberOf(order.token, sale.id),
      // Counted by the first attempt only: a retry is the same purchase.
      rateLimits: first ? this.rateLimits.inReservation(sale) : undefined,
    });
    timer();
    return result;
  }

  private async afterRefusal(attempts: Attempts, result: Refused): Promise<Next> {
    const { sale, userId, order, bucket } = attempts;
    if (result.saleNotLoaded) {
      // Redis lost the sale (restart without its data, a flush): a new incarnation of it, which sells
      // only fresh leases — never units that Redis may have promised before.
      this.logger.warn(`Sale ${sale.id} was not loaded in Redis; loading it from MySQL`);
      await this.leases.ensureLoaded(sale.id);
      return 'retry';
    }
    if (result.code === ErrorCode.SoldOut) {
      // A sold-out flag this instance holds proved it already — MySQL had nothing to lease, nothing was in
      // doubt or on its way — and no unit came back since (a return drops the flag): nothing to ask again.
      if (this.soldOut.isFlagged(sale.id)) return this.finalRefusal(attempts, result.code);
      // Redis's balance is only what it was leased: a buyer is told SOLD_OUT only once MySQL had nothing
      // left to lease after this refusal — nor the sale's other buckets, asked to give back part of
      // theirs — and Redis still refused after that (a lease another caller was granting meanwhile
      // counts too).
      if (!attempts.mysqlWasEmpty) {
        attempts.mysqlWasEmpty = (await this.leases.refill(sale, bucket.index, order.quantity)) === 0;
        return 'retry';
      }
      return this.soldOutUnlessInDoubt(attempts);
    }
    if (
      result.code === ErrorCode.TokenInvalid &&
      !attempts.adoptedToken &&
      this.tokens.signedFor(order.token, sale.id, userId)
    ) {
      // Signed for this buyer and sale, yet unknown to Redis: issued while Redis was down, or forgotten
      // by a Redis restarted without its data (or from an older copy). MySQL decides, as for the
      // fallback: an order made with it is the answer, expired or not; only an unexpired token that
      // bought nothing is put in Redis and tried again. An expired one issued since this copy of Redis is
      // the current one would have its purchase here: refused without asking MySQL.
      const unexpired = this.tokens.verify(order.token, sale.id, userId);
      if (!unexpired && !this.mayLackPurchase(order.token)) throw refusal(result.code);
      const replayed = await this.tokenOrders.orderOfToken(order.token, userId);
      if (replayed) return replayed;
      if (!unexpired) throw refusal(result.code);
      await this.redisTokens.adopt(order.token, sale, userId);
      attempts.adoptedToken = true;
      return 'retry';
    }
    return this.finalRefusal(attempts, result.code);
  }

  /**
   * Redis refused and MySQL had nothing left to lease: SOLD_OUT, unless units are in doubt after an
   * outage (a lost incarnation's leases, not yet counted back) — those may still be sold — or came back
   * to MySQL since the refill looked (settled from doubt, cancelled, expired): those are for sale now.
   */
  private async soldOutUnlessInDoubt(attempts: Attempts): Promise<never | WrittenOrder> {
    const { sale } = attempts;
    const { inDoubt, available } = await this.leases.unsettledOrReturned(sale.id);
    if (inDoubt > 0) {
      throw retryLater('The last units are being recounted after an outage; retry with the same token');
    }
    if (available > 0) throw retryLater('Units just came back to the sale; retry with the same token');
    // Later buyers of this sale may then be answered by the flag (purchase/strategies/redis-lua/sold-out-fast-path.ts).
    this.soldOut.noteSoldOut(sale);
    return this.finalRefusal(attempts, ErrorCode.SoldOut);
  }

  /**
   * Redis refuses a token signed for this buyer as sold out or over the limit: true of Redis's copy, but
   * a copy can lack a purchase MySQL holds — a lagging replica promoted, or an older copy refreshed,
   * after the worker wrote orders it had read from the lost one. Such a copy still holds the token
   * unused. The token's order in MySQL is then the answer, as for every replay (docs/failure-model.md,
   * "The answer rules"). Only a token issued before this copy became the current one can be such a
   * token: MySQL is asked for no other, so a refusal costs no MySQL query. The window's refusals come
   * before the replay (docs/api.md) and stand as they are.
   */
  private async finalRefusal(attempts: Attempts, code: ErrorCode): Promise<never | WrittenOrder> {
    const { sale, userId, order } = attempts;
    const replayComesFirst = code === ErrorCode.SoldOut || code === ErrorCode.LimitReached;
    if (replayComesFirst && this.tokens.signedFor(order.token, sale.id, userId) && this.mayLackPurchase(order.token)) {
      const promised = await this.tokenOrders.orderOfToken(order.token, userId);
      if (promised) return promised;
    }
    throw refusal(code);
  }

  /** Whether this copy of Redis may lack a purchase made with the token (IncarnationGuard.mayLackPurchaseOf). */
  private mayLackPurchase(token: string): boolean {
    return this.incarnations.mayLackPurchaseOf(this.tokens.issuedAtMs(token));
  }

  /**
   * A fresh reservation is `QUEUED`. A replay answers its order as it is (docs/api.md "Buying"): MySQL's
   * status, or `QUEUED` while the worker has not written it — its reservation may be written, paid,
   * cancelled or expired by now.
   */
  private async accepted(attempts: Attempts, result: Reserved): Promise<PurchaseAccepted> {
    // Epoch 0: a replay of an order MySQL sold itself (the fallback), or that ended before Redis was
    // loaded: written already, nothing to hand off.
    if (result.epoch !== 0) await this.followUp.complete(attempts.sale, attempts.bucket, result, attempts.writtenOn);
    if (result.kind === 'replayed') {
      this.metrics.countPurchase('replayed');
      return this.tokenOrders.replayOfReservation(result.orderNo);
    }
    this.metrics.countPurchase('accepted');
    return { orderNo: result.orderNo, status: 'QUEUED', made: 'reserved', replay: false };
  }
}
