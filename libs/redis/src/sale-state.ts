import { type ChainableCommander, Cluster } from 'ioredis';
import type { SaleLayout } from '@flash-sale/domain';
import { parseReservationRecord, type ReservationRecord } from './reservation-record';
import type { RedisClient } from './redis-client';
import { bucketsOf, buyerBucket, type KeyBuilder, type SaleBucket } from './sale-keys';

/** What the audit reads from Redis about one sale. */
export interface SaleRedisSnapshot {
  loaded: boolean;
  remaining: number;
  reservations: ReservationRecord[];
  /** orderNo -> units of orders whose buyer hold the release script freed (failed, cancelled, expired). */
  returned: Map<string, number>;
  /** The incarnation Redis sells on (0: none). */
  epoch: number;
  /** Units reserved in this incarnation (reconciliation compares it with the orders MySQL wrote from it). */
  reservedUnits: number;
  /** leaseId -> units of every lease granted to this incarnation. */
  grants: Map<string, number>;
  /** returnKey -> units and incarnation of every give-back (units a bucket handed back to MySQL). */
  givebacks: Map<string, { units: number; epoch: number }>;
}

/** What one bucket holds of a sale's incarnation (see `incarnation`). */
export interface BucketIncarnation {
  epoch: number;
  reservedUnits: number;
  grants: Set<string>;
  /** The return keys of every give-back the bucket recorded (give-back-4.lua). */
  giveBacks: Set<string>;
}

/** The window one bucket judges purchases by (set-window-1.lua, load-7.lua), with its version. */
export interface RedisSaleWindow {
  startsAtMs: number;
  endsAtMs: number;
  perUserLimit: number;
  /** MySQL's `sales.window_version` it was written from (0 when written before versions existed). */
  version: number;
}

/** A sale's stock and everyone who ever reserved in it, read at one instant (see `soldOutView`). */
export interface SoldOutView {
  remaining: number;
  /** Users with a reservation record in the sale, returned units or not. */
  reservedBy: Set<string>;
}

/**
 * Plain Redis reads and writes of a sale's keys: its tokens, balances, incarnation, windows, reservations,
 * snapshot and retention (the hand-off stream's are HandoffStream's, the drift board's DriftBoard's).
 */
export class SaleState {
  constructor(
    private readonly client: RedisClient,
    private readonly keys: KeyBuilder,
  ) {}

  /** Stores a token made elsewhere (signed by the API) for the reservation script to check and consume. */
  async storeToken(bucket: SaleBucket, token: string, userId: string, ttlSeconds: number): Promise<void> {
    await this.client.set(this.keys.bucket(bucket).token(token), userId, 'EX', ttlSeconds);
  }

  /** Deletes submit tokens stored for the sale's buyers (`storeToken`), each from its buyer's bucket. */
  async forgetTokens(sale: SaleLayout, tokens: readonly { userId: string; token: string }[]): Promise<void> {
    const byBucket = new Map<number, string[]>();
    for (const { userId, token } of tokens) {
      const bucket = buyerBucket(sale, userId);
      const keys = byBucket.get(bucket.index) ?? [];
      keys.push(this.keys.bucket(bucket).token(token));
      byBucket.set(bucket.index, keys);
    }
    // One DEL per bucket: a bucket's keys share its cluster slot.
    for (const keys of byBucket.values()) await this.client.del(...keys);
  }

  /**
   * Deletes every submit token stored for the sale, found by a SCAN of each master: for a sale whose
   * tokens nobody listed (a startup warm-up's, left by a process that died), not for a sale on the
   * request path — a SCAN walks the whole keyspace.
   */
  async forgetEveryToken(sale: SaleLayout): Promise<void> {
    const masters = this.client instanceof Cluster ? this.client.nodes('master') : [this.client];
    for (const bucket of bucketsOf(sale)) {
      const pattern = this.keys.bucket(bucket).token('*');
      for (const node of masters) {
        let cursor = '0';
        do {
          const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
          if (keys.length > 0) await node.del(...keys);
          cursor = next;
        } while (cursor !== '0');
      }
    }
  }

  /** Like `storeToken`, unless Redis already knows the token or it bought something (a replay exists). */
  async storeTokenIfAbsent(bucket: SaleBucket, token: string, userId: string, ttlSeconds: number): Promise<void> {
    const sale = this.keys.bucket(bucket);
    if (await this.client.hexists(sale.replays, token)) return;
    await this.client.set(sale.token(token), userId, 'EX', ttlSeconds, 'NX');
  }

  /** Units Redis can still sell in all the sale's buckets, or `undefined` when none is loaded. */
  async remaining(sale: SaleLayout): Promise<number | undefined> {
    const balances = await this.balances(sale);
    if (balances.every((balance) => balance === undefined)) return undefined;
    return balances.reduce<number>((sum, balance) => sum + (balance ?? 0), 0);
  }

  /** The return keys of the give-backs the sale's buckets have recorded (give-back-4.lua), applied in MySQL or not. */
  async giveBackKeys(sale: SaleLayout): Promise<string[]> {
    const keys = await Promise.all(
      bucketsOf(sale).map((bucket) => this.client.hkeys(this.keys.bucket(bucket).givebacks)),
    );
    return keys.flat();
  }

  /** Each bucket's balance, in index order (`undefined`: that bucket is not loaded). */
  async balances(sale: SaleLayout): Promise<(number | undefined)[]> {
    const values = await Promise.all(bucketsOf(sale).map((bucket) => this.client.get(this.keys.bucket(bucket).stock)));
    return values.map((value) => (value === null ? undefined : Number(value)));
  }

  /**
   * What identifies the incarnation Redis holds of a sale: its epoch, the units reserved in it, the
   * leases granted to it and the give-backs it recorded — enough to tell a stale copy from the real thing
   * (see StockLeases). One MULTI.
   */
  async incarnation(bucket: SaleBucket): Promise<BucketIncarnation | undefined> {
    const sale = this.keys.bucket(bucket);
    const [meta, grants, giveBacks] = (await execChecked(
      this.client.multi().hmget(sale.meta, 'epoch', 'reservedUnits').hkeys(sale.grants).hkeys(sale.givebacks),
      'the incarnation read',
    )) as [(string | null)[], string[], string[]];
    if (meta[0] === null) return undefined;
    return {
      epoch: Number(meta[0]),
      reservedUnits: Number(meta[1] ?? 0),
      grants: new Set(grants),
      giveBacks: new Set(giveBacks),
    };
  }

  /** The window each bucket of the sale holds (undefined: a bucket without one). */
  async windows(sale: SaleLayout): Promise<(RedisSaleWindow | undefined)[]> {
    return Promise.all(
      bucketsOf(sale).map(async (bucket) => {
        const [startsAtMs, endsAtMs, perUserLimit, version] = await this.client.hmget(
          this.keys.bucket(bucket).meta,
          'startsAtMs',
          'endsAtMs',
          'perUserLimit',
          'windowVersion',
        );
        if (startsAtMs === null || endsAtMs === null) return undefined;
        return {
          startsAtMs: Number(startsAtMs),
          endsAtMs: Number(endsAtMs),
          perUserLimit: Number(perUserLimit ?? 0),
          version: Number(version ?? 0),
        };
      }),
    );
  }

  /** A reservation of the sale by order number, in whichever bucket holds it. */
  async reservation(sale: SaleLayout, orderNo: string): Promise<ReservationRecord | undefined> {
    const values = await Promise.all(
      bucketsOf(sale).map((bucket) => this.client.hget(this.keys.bucket(bucket).reservations, orderNo)),
    );
    const value = values.find((found) => found !== null);
    return value ? parseReservationRecord(orderNo, value) : undefined;
  }

  /** The reservations one buyer made in one sale (in their bucket), oldest first. */
  async reservationsOf(bucket: SaleBucket, userId: string): Promise<ReservationRecord[]> {
    const sale = this.keys.bucket(bucket);
    const orderList = await this.client.hget(sale.buyers, `${userId}:orders`);
    if (!orderList) return [];
    const orderNos = orderList.split(' ');
    const values = await this.client.hmget(sale.reservations, ...orderNos);
    return orderNos.flatMap((orderNo, i) => {
      const value = values[i];
      return value ? [parseReservationRecord(orderNo, value)] : [];
    });
  }

  /**
   * Remaining stock and every user who ever reserved in the sale, each bucket read atomically (one MULTI:
   * a bucket's keys share its hash tag), or `undefined` when a bucket is not loaded or the sale has more
   * than `maxReservations` reservations (reading them all would cost Redis more than the round trips it
   * could save). Units moving between buckets meanwhile are announced on the stock-returned channel (a
   * lease grant), which the caller watches.
   */
  async soldOutView(sale: SaleLayout, maxReservations: number): Promise<SoldOutView | undefined> {
    const buckets = bucketsOf(sale);
    const sizes = await Promise.all(buckets.map((bucket) => this.client.hlen(this.keys.bucket(bucket).reservations)));
    if (sizes.reduce((sum, size) => sum + size, 0) > maxReservations) return undefined;
    const view: SoldOutView = { remaining: 0, reservedBy: new Set() };
    for (const bucket of buckets) {
      const keys = this.keys.bucket(bucket);
      const replies = await this.client.multi().get(keys.stock).hvals(keys.reservations).exec();
      const [[stockError, stock], [recordsError, records]] = (replies ?? []) as [
        [Error | null, string | null],
        [Error | null, string[]],
      ];
      if (stockError || recordsError) throw stockError ?? recordsError;
      if (stock === null) return undefined;
      view.remaining += Number(stock);
      for (const record of records) view.reservedBy.add(parseReservationRecord('', record).userId);
    }
    return view;
  }

  /**
   * Everything Redis holds of the sale's books, bucket by bucket (each read at one instant), summed:
   * `loaded` only when every bucket is, `epoch` the lowest of theirs.
   */
  async snapshot(sale: SaleLayout): Promise<SaleRedisSnapshot> {
    const parts = await Promise.all(bucketsOf(sale).map((bucket) => this.bucketSnapshot(bucket)));
    if (parts.length === 1) return parts[0]!;
    return {
      loaded: parts.every((part) => part.loaded),
      epoch: Math.min(...parts.map((part) => part.epoch)),
      reservedUnits: parts.reduce((sum, part) => sum + part.reservedUnits, 0),
      remaining: parts.reduce((sum, part) => sum + part.remaining, 0),
      reservations: parts.flatMap((part) => part.reservations),
      returned: new Map(parts.flatMap((part) => [...part.returned])),
      grants: new Map(parts.flatMap((part) => [...part.grants])),
      givebacks: new Map(parts.flatMap((part) => [...part.givebacks])),
    };
  }

  private async bucketSnapshot(bucket: SaleBucket): Promise<SaleRedisSnapshot> {
    const keys = this.keys.bucket(bucket);
    // One MULTI (all keys share the bucket's hash tag): the ledgers are read at one instant.
    const replies = await execChecked(
      this.client
        .multi()
        .get(keys.stock)
        .hgetall(keys.reservations)
        .hgetall(keys.returned)
        .hmget(keys.meta, 'epoch', 'reservedUnits')
        .hgetall(keys.grants)
        .hgetall(keys.givebacks),
      'the snapshot transaction',
    );
    const [stock, reservations, returned, meta, grants, givebacks] = replies as [
      string | null,
      Record<string, string>,
      Record<string, string>,
      (string | null)[],
      Record<string, string>,
      Record<string, string>,
    ];
    return {
      loaded: stock !== null && meta[0] !== null,
      epoch: Number(meta[0] ?? 0),
      reservedUnits: Number(meta[1] ?? 0),
      grants: new Map(Object.entries(grants).map(([leaseId, units]) => [leaseId, Number(units)])),
      givebacks: new Map(
        Object.entries(givebacks).map(([returnKey, record]) => {
          const [units, epoch] = record.split('|');
          return [returnKey, { units: Number(units), epoch: Number(epoch) }];
        }),
      ),
      remaining: Number(stock ?? 0),
      reservations: Object.entries(reservations).map(([orderNo, value]) => parseReservationRecord(orderNo, value)),
      returned: new Map(Object.entries(returned).map(([orderNo, units]) => [orderNo, Number(units)])),
    };
  }

  /**
   * Retention: every key of the sale expires at `atMs` (epoch ms; one in the past deletes them now).
   * Idempotent. For ended sales whose reservations are all written (see SaleRetention in the worker).
   */
  async expireAt(sale: SaleLayout, atMs: number): Promise<void> {
    for (const bucket of bucketsOf(sale)) {
      const multi = this.client.multi();
      for (const key of this.keys.bucket(bucket).all()) multi.pexpireat(key, atMs);
      await execChecked(multi);
    }
  }

  /** Undoes `expireAt`: a sale whose end was moved into the future again must keep its keys. */
  async clearExpiry(sale: SaleLayout): Promise<void> {
    for (const bucket of bucketsOf(sale)) {
      const multi = this.client.multi();
      for (const key of this.keys.bucket(bucket).all()) multi.persist(key);
      await execChecked(multi);
    }
  }

  /** Forget everything Redis knows about a sale (a brand-new sale must not inherit stale keys). */
  async reset(sale: SaleLayout): Promise<void> {
    for (const bucket of bucketsOf(sale)) await this.client.del(...this.keys.bucket(bucket).all());
  }
}

/** Runs a MULTI and returns its replies' values, or throws its first error (or the abort). */
async function execChecked(multi: ChainableCommander, what = 'the transaction'): Promise<unknown[]> {
  const replies = (await multi.exec()) as [Error | null, unknown][] | null;
  if (!replies) throw new Error(`Redis aborted ${what}`);
  const failed = replies.find(([error]) => error);
  if (failed) throw failed[0];
  return replies.map(([, value]) => value);
}
