import { type AppConfig, InjectAppConfig } from '@flash-sale/config';
import { DomainError, ErrorCode, errorMessage, OrderNumberGenerator, RetryLaterError } from '@flash-sale/domain';
import { type SaleEntity, StockLeases } from '@flash-sale/db';
import {
  buyerBucket,
  RedisConnection,
  ReservationScripts,
  type ReserveResult,
  type SaleBucket,
  SaleRedisRepository,
} from '@flash-sale/redis';
import { Injectable, Logger } from '@nestjs/common';
import type { AuthUser } from '../common/auth-user';
import { isDependencyDown } from '../common/error-body';
import { MetricsService } from '../metrics/metrics.service';
import { LoadShedder } from '../protection/load-shedder';
import { PurchaseRateLimit } from '../protection/purchase-rate-limit';
import { rateLimited } from '../protection/retry-later.error';
import { SaleCatalog } from '../sales/sale-catalog';
import { DbPurchase, type OrderCreated } from './db-purchase';
import { DurableAck } from './durable-ack';
import { IncarnationGuard } from './incarnation-guard';
import { refusal } from './refusals';
import { SoldOutGate } from './sold-out-gate';
import { type IssuedSubmitToken, SubmitTokens } from './submit-tokens';
import { WriteOrdersNudge } from './write-orders-nudge';

/** `QUEUED` (202): reserved in Redis, written by the worker. `PENDING_PAYMENT` (201): written in MySQL now. */
export type PurchaseAccepted = { orderNo: string; status: 'QUEUED' } | OrderCreated;

/**
 * A fresh order number collides (~2^-80), a Redis reload races us, or leases refilled the balance a
 * moment after it ran dry: a few tries are plenty.
 */
const MAX_RESERVE_ATTEMPTS = 4;

/** What a buyer is told when the answer cannot be given safely now but can be in a moment. */
const RETRY_SECONDS = 1;

/** `503` + `retry-after`: nothing happened, and the same submit token gets its true answer shortly. */
function notNow(message: string): RetryLaterError {
  return new RetryLaterError(ErrorCode.Unavailable, message, RETRY_SECONDS);
}

/**
 * The purchase path (docs/architecture.md, steps 2–4) — submit token, one reservation script that also hands the
 * order off, a nudge to the sale's writer — and the
 * dispatch to the MySQL-only strategies of a sale that asked for one.
 */
@Injectable()
export class PurchaseService {
  private readonly logger = new Logger(PurchaseService.name);
  private readonly orderNumbers = new OrderNumberGenerator();
  /** Sales this instance sold through the fallback: refresh them in Redis before Redis sells again. */
  private readonly reloadAfterFallback = new Set<string>();

  constructor(
    private readonly catalog: SaleCatalog,
    private readonly leases: StockLeases,
    private readonly saleRedis: SaleRedisRepository,
    private readonly scripts: ReservationScripts,
    private readonly writers: WriteOrdersNudge,
    private readonly shedder: LoadShedder,
    private readonly limits: PurchaseRateLimit,
    private readonly dbPurchase: DbPurchase,
    private readonly tokens: SubmitTokens,
    private readonly soldOut: SoldOutGate,
    private readonly incarnations: IncarnationGuard,
    private readonly durableAck: DurableAck,
    private readonly redis: RedisConnection,
    private readonly metrics: MetricsService,
    @InjectAppConfig() private readonly config: AppConfig,
  ) {}

  async issueToken(user: AuthUser, saleId: string): Promise<IssuedSubmitToken> {
    const sale = await this.catalog.get(saleId);
    if (sale.endsAt <= new Date()) throw new DomainError(ErrorCode.SaleEnded, 'This sale has ended');
    return this.tokens.issue(sale, user.id, sale.strategy === 'redis-lua');
  }

  /**
   * `limitsDue`: the purchase rate limits are still to be counted (protection/purchase-rate-limit.ts).
   * The reservation script counts them itself; any other answer spends them first.
   */
  async purchase(
    user: AuthUser,
    saleId: string,
    submitToken: string,
    quantity: number,
    limitsDue = false,
  ): Promise<PurchaseAccepted> {
    try {
      let sale: SaleEntity;
      try {
        sale = await this.catalog.get(saleId);
      } catch (error) {
        if (limitsDue) await this.limits.consume(saleId, user.id); // 429 before 404
        throw error;
      }
      if (limitsDue && (sale.strategy !== 'redis-lua' || !this.reachesScript())) {
        await this.limits.consume(sale, user.id);
        limitsDue = false;
      }
      if (sale.strategy !== 'redis-lua') {
        const created = await this.dbPurchase.purchase(sale, user.id, submitToken, quantity, sale.strategy);
        this.metrics.countPurchase('accepted');
        return created;
      }
      return await this.purchaseThroughRedis(sale, user, submitToken, quantity, limitsDue);
    } catch (error) {
      this.metrics.countRefusedPurchase(error);
      throw error;
    }
  }

  /**
   * The redis-lua path, or — when Redis is unreachable and REDIS_FALLBACK is on — db-optimistic on the
   * units MySQL has not leased, so the sale keeps selling correctly, only slower. Once Redis answers
   * again the sale is refreshed in Redis (with what the fallback sold and its tokens) before Redis
   * sells anything, so no unit and no token is used twice.
   */
  private async purchaseThroughRedis(
    sale: SaleEntity,
    user: AuthUser,
    submitToken: string,
    quantity: number,
    limitsDue: boolean,
  ) {
    if (!this.reachesScript()) return this.fallBack(sale, user, submitToken, quantity);
    if (this.reloadAfterFallback.delete(sale.id)) await this.leases.ensureLoaded(sale.id);
    if (this.incarnations.mustVerify(sale.id)) await this.incarnations.verify(sale.id);
    this.durableAck.admit();
    try {
      return await this.reserve(sale, user, submitToken, quantity, limitsDue);
    } catch (error) {
      if (!this.config.purchase.redisFallback || !isDependencyDown(error) || this.redis.isReady) throw error;
      return this.fallBack(sale, user, submitToken, quantity);
    }
  }

  /**
   * MySQL sells only units it never leased, and only to a buyer Redis never sold to (RedisBuyers): a
   * buyer marked for Redis may hold a reservation there that MySQL has not seen, or a token Redis may
   * have consumed a moment before it went down. They are asked to retry once Redis is back, when the
   * same token gets its true answer. A token MySQL already made an order with replays that order.
   */
  private async fallBack(
    sale: SaleEntity,
    user: AuthUser,
    submitToken: string,
    quantity: number,
  ): Promise<OrderCreated> {
    this.dbPurchase.checkWindowAndToken(sale, user.id, submitToken);
    const replayed = await this.dbPurchase.orderOfToken(submitToken, user.id);
    if (replayed) return replayed;
    this.reloadAfterFallback.add(sale.id);
    try {
      const created = await this.dbPurchase.purchase(sale, user.id, submitToken, quantity, 'db-optimistic', true);
      this.metrics.countPurchase('accepted');
      return created;
    } catch (error) {
      // MySQL's own units are gone, but Redis may still hold leased ones: not sold out, not yet.
      const soldOut = error instanceof DomainError && error.code === ErrorCode.SoldOut;
      if (soldOut && (await this.leases.unitsOutsideMySql(sale.id)).leased > 0) {
        throw notNow('The last units are with a service that is down; retry with the same token');
      }
      throw error;
    }
  }

  private async reserve(
    sale: SaleEntity,
    user: AuthUser,
    submitToken: string,
    quantity: number,
    limitsDue: boolean,
  ): Promise<PurchaseAccepted> {
    let adoptedToken = false;
    let mysqlWasEmpty = false;
    // The buyer's records and their share of the stock live in one bucket (docs/architecture.md, "Hot sales").
    const bucket = buyerBucket(sale, user.id);
    for (let attempt = 1; attempt <= MAX_RESERVE_ATTEMPTS; attempt++) {
      const reservationTimer = this.metrics.reservationTimer();
      const result = await this.scripts.reserve({
        bucket,
        userId: user.id,
        submitToken,
        quantity,
        orderNo: this.orderNumbers.next(sale.id),
        // Counted by the first attempt only: a retry is the same purchase.
        limits: limitsDue && attempt === 1 ? this.limits.limitsFor(sale) : undefined,
      });
      reservationTimer();
      switch (result.kind) {
        case 'reserved':
        case 'replayed':
          return this.accepted(sale, user, submitToken, result, bucket);
        case 'order-number-taken':
          continue;
        case 'rate-limited':
          throw rateLimited(result.waitMs);
        case 'refused':
          if (attempt === MAX_RESERVE_ATTEMPTS) {
            // Units kept arriving and going to others: not known to be sold out, so not SOLD_OUT.
            if (result.code === ErrorCode.SoldOut && !mysqlWasEmpty) break;
            throw refusal(result.code);
          }
          if (result.saleNotLoaded) {
            // Redis lost the sale (restart without its data, a flush): a new incarnation of it, which
            // sells only fresh leases — never units that Redis may have promised before.
            this.logger.warn(`Sale ${sale.id} was not loaded in Redis; loading it from MySQL`);
            await this.leases.ensureLoaded(sale.id);
            continue;
          }
          if (result.code === ErrorCode.SoldOut) {
            // Redis's balance is only what it was leased: a buyer is told SOLD_OUT only once MySQL
            // had nothing left to lease after this refusal — nor the sale's other buckets, asked to give
            // back part of theirs — and Redis still refused after that (a lease another caller was
            // granting meanwhile counts too).
            if (!mysqlWasEmpty) {
              mysqlWasEmpty = (await this.leases.refill(sale, bucket.index, quantity)) === 0;
              continue;
            }
            if ((await this.leases.unitsOutsideMySql(sale.id)).inDoubt > 0) {
              throw notNow('The last units are being recounted after an outage; retry with the same token');
            }
            // Later buyers of this sale may then be answered by the flag (purchase/sold-out-fast-path.ts).
            this.soldOut.noteSoldOut(sale);
            throw refusal(result.code);
          }
          if (
            result.code === ErrorCode.TokenInvalid &&
            !adoptedToken &&
            this.tokens.verify(submitToken, sale.id, user.id)
          ) {
            // Signed for this buyer and sale, unexpired, yet unknown to Redis: issued while Redis was
            // down, or forgotten by a Redis restarted without its data. MySQL decides, as for the fallback.
            const replayed = await this.dbPurchase.orderOfToken(submitToken, user.id);
            if (replayed) return replayed;
            await this.tokens.adoptIntoRedis(submitToken, sale, user.id);
            adoptedToken = true;
            continue;
          }
          throw refusal(result.code);
      }
    }
    throw notNow('Could not reserve right now; retry with the same token');
  }

  /** Whether a redis-lua purchase goes to the reservation script now (not to the Redis-down fallback). */
  private reachesScript(): boolean {
    return !(this.config.purchase.redisFallback && !this.redis.isReady);
  }

  private async accepted(
    sale: SaleEntity,
    user: AuthUser,
    submitToken: string,
    result: Extract<ReserveResult, { kind: 'reserved' | 'replayed' }>,
    bucket: SaleBucket,
  ): Promise<PurchaseAccepted> {
    if (result.epoch === 0) {
      // A replay of an order MySQL sold itself (the fallback): it is written already.
      this.metrics.countPurchase('replayed');
      return { orderNo: result.orderNo, status: 'PENDING_PAYMENT' };
    }
    this.shedder.noteBacklog(bucket, result.backlog);
    // A replay nudges too: its order may still be waiting (the first answer was a 503, or lost).
    await this.writers.nudge(sale);
    if (result.balance < this.leases.policy.lowWater) {
      // The next lease, before Redis runs dry: buyers never wait on MySQL in the common case.
      this.leases.topUp(sale.id, bucket.index).catch((error: unknown) => {
        this.logger.warn(`Sale ${sale.id}: lease top-up failed: ${errorMessage(error)}`);
      });
    }
    await this.durableAck.confirm(bucket);
    this.metrics.countPurchase(result.kind === 'replayed' ? 'replayed' : 'accepted');
    return { orderNo: result.orderNo, status: 'QUEUED' };
  }
}
