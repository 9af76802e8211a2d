import { ErrorCode, type LoadedOrder } from '@flash-sale/domain';
import { randomUUID } from 'node:crypto';
import { defineScripts, type ScriptedClient } from './lua-source';
import type { RedisClient } from './redis-client';
import type { KeyBuilder, SaleBucket } from './sale-keys';

const SCRIPTS = {
  fsReserve: { file: 'reserve-9.lua', numberOfKeys: 9 },
  fsPurchaseRateLimit: { file: 'purchase-rate-limit-2.lua', numberOfKeys: 2 },
  fsRelease: { file: 'release-3.lua', numberOfKeys: 3 },
  fsLoad: { file: 'load-7.lua', numberOfKeys: 7 },
  fsGrantLease: { file: 'grant-lease-3.lua', numberOfKeys: 3 },
  fsGiveBack: { file: 'give-back-4.lua', numberOfKeys: 4 },
  fsSetWindow: { file: 'set-window-1.lua', numberOfKeys: 1 },
  // Compare-and-delete: a loading mark is cleared only by the process that set it.
  fsClearOwnMark: { file: 'lock-release-1.lua', numberOfKeys: 1 },
} as const;

/** The one table that maps the reservation script's negative return codes to error codes. */
export const RESERVE_FAILURES: Readonly<Record<number, ErrorCode>> = {
  [-1]: ErrorCode.Unavailable, // sale not loaded into Redis
  [-2]: ErrorCode.SaleNotStarted,
  [-3]: ErrorCode.SaleEnded,
  [-4]: ErrorCode.TokenInvalid,
  [-5]: ErrorCode.LimitReached,
  [-6]: ErrorCode.SoldOut,
};
const SALE_NOT_LOADED = -1;
const ORDER_NUMBER_TAKEN = -7;
const RATE_LIMITED = -8;

/** The purchase rate limits (docs/protection.md): attempts per window, per buyer in a sale and per sale. */
export interface PurchaseRateLimitSettings {
  perUser: { points: number; windowMs: number };
  perSale: { points: number; windowMs: number };
}

export interface ReserveInput {
  /** The buyer's bucket (buyerBucket). */
  bucket: SaleBucket;
  userId: string;
  submitToken: string;
  quantity: number;
  orderNo: string;
  /** Count the purchase rate limits first, in the same script; omitted when already counted. */
  rateLimits?: PurchaseRateLimitSettings;
}

export type ReserveResult =
  | {
      kind: 'reserved' | 'replayed';
      orderNo: string;
      slot: number;
      quantity: number;
      reservedAt: Date;
      /** The incarnation whose lease the units came from; 0 for an order MySQL sold itself (replays only). */
      epoch: number;
      /** Units Redis can still sell after this call. */
      balance: number;
      /** Reservations of the sale waiting in its hand-off stream (not written to MySQL yet). */
      backlog: number;
    }
  | { kind: 'refused'; code: ErrorCode; saleNotLoaded: boolean }
  | { kind: 'rate-limited'; waitMs: number }
  | { kind: 'order-number-taken' };

export type ReleaseResult = 'released' | 'already-released' | 'unknown-reservation';

export interface LoadSale {
  startsAt: Date;
  endsAt: Date;
  perUserLimit: number;
  stock: number;
  /** The incarnation to load as (MySQL's `sales.redis_epoch`). */
  epoch: number;
  /** MySQL's `sales.window_version`, read with the window: an older one never replaces a newer one. */
  windowVersion: number;
}

/** A window to write into a bucket (set-window-1.lua). */
export interface WindowWrite {
  startsAt: Date;
  endsAt: Date;
  perUserLimit: number;
  version: number;
}

export type LoadResult =
  | {
      kind: 'opened' | 'refreshed';
      balance: number;
      /** Orders Redis did not know until now (the load announced them on the stock-returned channel). */
      added: number;
    }
  | { kind: 'superseded' };

export type GrantResult = { kind: 'granted' | 'already-granted'; balance: number } | { kind: 'wrong-epoch' };

export type GiveBackResult =
  | { kind: 'given-back'; units: number; /** Its hand-off entry (none when no unit was given). */ entryId?: string }
  | { kind: 'given-back-before'; units: number }
  | { kind: 'wrong-epoch' };

/**
 * The only caller of the sale Lua scripts. Registers them (`defineScripts`) and turns their replies into
 * typed results; also keeps the mark a process sets while it loads an incarnation, which the load reads.
 */
export class ReservationScripts {
  private readonly scripted: ScriptedClient<keyof typeof SCRIPTS>;

  constructor(
    private readonly client: RedisClient,
    private readonly keys: KeyBuilder,
  ) {
    this.scripted = defineScripts(client, SCRIPTS);
  }

  /**
   * Marks the sale as being loaded with incarnation `epoch` by this caller, for `ttlMs` at most (a process
   * that dies mid-load holds up no one for longer). Returns the mark, for `clearIncarnationLoading`.
   */
  async markIncarnationLoading(saleId: string, epoch: number, ttlMs: number): Promise<string> {
    const mark = `${epoch}:${randomUUID()}`;
    await this.client.set(this.keys.incarnationLoading(saleId), mark, 'PX', ttlMs);
    return mark;
  }

  /** The incarnation some process is loading into the sale's buckets right now, if any. */
  async incarnationLoading(saleId: string): Promise<number | undefined> {
    const mark = await this.client.get(this.keys.incarnationLoading(saleId));
    return mark === null ? undefined : Number(mark.slice(0, mark.indexOf(':')));
  }

  /** Clears the caller's own mark; one set since by another loader stays. */
  async clearIncarnationLoading(saleId: string, mark: string): Promise<void> {
    await this.scripted.fsClearOwnMark(this.keys.incarnationLoading(saleId), mark);
  }

  async reserve(input: ReserveInput): Promise<ReserveResult> {
    const sale = this.keys.bucket(input.bucket);
    const reply = await this.scripted.fsReserve(
      sale.meta,
      sale.stock,
      sale.buyers,
      sale.token(input.submitToken),
      sale.reservations,
      sale.replays,
      sale.handoff,
      sale.purchaseRateLimitOf(input.userId),
      sale.purchaseRateLimit,
      input.userId,
      input.submitToken,
      input.quantity,
      input.orderNo,
      ...rateLimitArgs(input.rateLimits),
    );
    if (Array.isArray(reply) && reply[0] === RATE_LIMITED) return { kind: 'rate-limited', waitMs: Number(reply[1]) };
    if (Array.isArray(reply)) {
      const [status, orderNo, slot, reservedAtMs, quantity, epoch, balance, backlog] = reply as [
        number,
        string,
        number,
        number,
        number,
        number,
        number,
        number,
      ];
      return {
        kind: status === 1 ? 'reserved' : 'replayed',
        orderNo,
        slot,
        quantity,
        reservedAt: new Date(reservedAtMs),
        epoch,
        balance,
        backlog,
      };
    }
    const code = Number(reply);
    if (code === ORDER_NUMBER_TAKEN) return { kind: 'order-number-taken' };
    const errorCode = RESERVE_FAILURES[code];
    if (errorCode === undefined) throw new Error(`reserve script returned an unknown code: ${String(reply)}`);
    return { kind: 'refused', code: errorCode, saleNotLoaded: code === SALE_NOT_LOADED };
  }

  /**
   * Counts one purchase attempt against the rate limits without reserving (see purchase-rate-limit-2.lua):
   * 0 when admitted, else the milliseconds to wait.
   */
  async purchaseRateLimitWait(bucket: SaleBucket, userId: string, limits: PurchaseRateLimitSettings): Promise<number> {
    const sale = this.keys.bucket(bucket);
    return Number(
      await this.scripted.fsPurchaseRateLimit(
        sale.purchaseRateLimitOf(userId),
        sale.purchaseRateLimit,
        ...rateLimitArgs(limits),
      ),
    );
  }

  /** Frees the buyer's units and slot of a FAILED, cancelled or expired order, exactly once. */
  async release(bucket: SaleBucket, orderNo: string): Promise<ReleaseResult> {
    const sale = this.keys.bucket(bucket);
    const reply = Number(await this.scripted.fsRelease(sale.buyers, sale.reservations, sale.returned, orderNo));
    if (reply === 1) return 'released';
    if (reply === 0) return 'already-released';
    return 'unknown-reservation';
  }

  /**
   * Loads one bucket of the sale as incarnation `input.epoch`, or refreshes it (see load-7.lua), with the
   * orders MySQL holds of the buyers of that bucket.
   */
  async load(bucket: SaleBucket, input: LoadSale, orders: readonly LoadedOrder[]): Promise<LoadResult> {
    const sale = this.keys.bucket(bucket);
    const orderArgs = orders.flatMap((order) => [
      order.orderNo,
      order.userId,
      order.quantity,
      order.slot,
      order.reservedAt.getTime(),
      order.submitToken ?? '',
      order.holding ? 1 : 0,
    ]);
    const reply = await this.scripted.fsLoad(
      sale.meta,
      sale.stock,
      sale.buyers,
      sale.reservations,
      sale.returned,
      sale.replays,
      sale.grants,
      input.startsAt.getTime(),
      input.endsAt.getTime(),
      input.perUserLimit,
      input.stock,
      input.epoch,
      this.keys.stockReturnedChannel,
      bucket.saleId,
      input.windowVersion,
      ...orderArgs,
    );
    if (!Array.isArray(reply)) return { kind: 'superseded' };
    const [opened, balance, added] = reply as [number, number, number];
    return { kind: opened === 1 ? 'opened' : 'refreshed', balance, added };
  }

  /**
   * Writes the window into the bucket, whatever version it holds (for the holder of the sale's window
   * lock only; see set-window-1.lua). `ifPresent`: not into a bucket without state. Returns whether it wrote.
   */
  async setWindow(bucket: SaleBucket, window: WindowWrite, ifPresent: boolean): Promise<boolean> {
    const reply = await this.scripted.fsSetWindow(
      this.keys.bucket(bucket).meta,
      window.startsAt.getTime(),
      window.endsAt.getTime(),
      window.perUserLimit,
      window.version,
      ifPresent ? '1' : '0',
    );
    return reply === 1;
  }

  /** Adds a lease's units to the bucket's balance in incarnation `epoch`, once per lease id. */
  async grantLease(bucket: SaleBucket, epoch: number, leaseId: string, units: number): Promise<GrantResult> {
    const sale = this.keys.bucket(bucket);
    const reply = await this.scripted.fsGrantLease(
      sale.meta,
      sale.stock,
      sale.grants,
      epoch,
      leaseId,
      units,
      this.keys.stockReturnedChannel,
      bucket.saleId,
    );
    if (!Array.isArray(reply)) return { kind: 'wrong-epoch' };
    const [granted, balance] = reply as [number, number];
    return { kind: granted === 1 ? 'granted' : 'already-granted', balance };
  }

  /**
   * Takes up to `maxUnits` of the bucket's balance in incarnation `epoch` out of Redis, to be given back
   * to MySQL under `returnKey` (see give-back-4.lua), once per return key.
   */
  async giveBack(bucket: SaleBucket, epoch: number, returnKey: string, maxUnits: number): Promise<GiveBackResult> {
    const sale = this.keys.bucket(bucket);
    const reply = await this.scripted.fsGiveBack(
      sale.meta,
      sale.stock,
      sale.givebacks,
      sale.handoff,
      epoch,
      returnKey,
      maxUnits,
    );
    if (!Array.isArray(reply)) return { kind: 'wrong-epoch' };
    const [now, units, entryId] = reply as [number, number, string?];
    if (now !== 1) return { kind: 'given-back-before', units };
    return entryId === undefined ? { kind: 'given-back', units } : { kind: 'given-back', units, entryId };
  }
}

function rateLimitArgs(limits: PurchaseRateLimitSettings | undefined): [number, number, number, number] {
  if (!limits) return [0, 0, 0, 0];
  return [limits.perUser.points, limits.perUser.windowMs, limits.perSale.points, limits.perSale.windowMs];
}
