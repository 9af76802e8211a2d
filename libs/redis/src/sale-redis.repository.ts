import type { ChainableCommander } from 'ioredis';
import { parseReservationRecord, type ReservationRecord } from './reservation-record';
import type { RedisClient } from './redis-client';
import { HANDOFF_GROUP, type KeyBuilder } from './sale-keys';

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
}

/** A sale's stock and everyone who ever reserved in it, read at one instant (see `soldOutView`). */
export interface SoldOutView {
  remaining: number;
  /** Users with a reservation record in the sale, returned units or not. */
  reservedBy: Set<string>;
}

/** Plain Redis reads and writes of a sale (everything that is not one of the Lua scripts). */
export class SaleRedisRepository {
  constructor(
    private readonly client: RedisClient,
    private readonly keys: KeyBuilder,
  ) {}

  /** Stores a token made elsewhere (signed by the API) for the reservation script to check and consume. */
  async storeToken(saleId: string, token: string, userId: string, ttlSeconds: number): Promise<void> {
    await this.client.set(this.keys.sale(saleId).token(token), userId, 'EX', ttlSeconds);
  }

  /** Like `storeToken`, unless Redis already knows the token or it bought something (a replay exists). */
  async storeTokenIfAbsent(saleId: string, token: string, userId: string, ttlSeconds: number): Promise<void> {
    const sale = this.keys.sale(saleId);
    if (await this.client.hexists(sale.replays, token)) return;
    await this.client.set(sale.token(token), userId, 'EX', ttlSeconds, 'NX');
  }

  /** Units Redis can still sell, or `undefined` when the sale is not loaded. */
  async remaining(saleId: string): Promise<number | undefined> {
    const value = await this.client.get(this.keys.sale(saleId).stock);
    return value === null ? undefined : Number(value);
  }

  /**
   * What identifies the incarnation Redis holds of a sale: its epoch, the units reserved in it and the
   * leases granted to it — enough to tell a stale copy from the real thing (see StockLeases). One MULTI.
   */
  async incarnation(
    saleId: string,
  ): Promise<{ epoch: number; reservedUnits: number; grants: Set<string> } | undefined> {
    const sale = this.keys.sale(saleId);
    const replies = (await this.client.multi().hmget(sale.meta, 'epoch', 'reservedUnits').hkeys(sale.grants).exec()) as
      [Error | null, unknown][] | null;
    if (!replies) throw new Error('Redis aborted the incarnation read');
    const failed = replies.find(([error]) => error);
    if (failed) throw failed[0];
    const [meta, grants] = replies.map(([, value]) => value) as [(string | null)[], string[]];
    if (meta[0] === null) return undefined;
    return { epoch: Number(meta[0]), reservedUnits: Number(meta[1] ?? 0), grants: new Set(grants) };
  }

  async reservation(saleId: string, orderNo: string): Promise<ReservationRecord | undefined> {
    const value = await this.client.hget(this.keys.sale(saleId).reservations, orderNo);
    return value === null ? undefined : parseReservationRecord(orderNo, value);
  }

  /** The reservations one buyer made in one sale, oldest first. */
  async reservationsOf(saleId: string, userId: string): Promise<ReservationRecord[]> {
    const sale = this.keys.sale(saleId);
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
   * Remaining stock and every user who ever reserved in the sale, atomically (one MULTI: all keys share
   * the sale's hash tag), or `undefined` when the sale is not loaded or has more than `maxReservations`
   * reservations (reading them all would cost Redis more than the round trips it could save).
   */
  async soldOutView(saleId: string, maxReservations: number): Promise<SoldOutView | undefined> {
    const sale = this.keys.sale(saleId);
    if ((await this.client.hlen(sale.reservations)) > maxReservations) return undefined;
    const replies = await this.client.multi().get(sale.stock).hvals(sale.reservations).exec();
    const [[stockError, stock], [recordsError, records]] = (replies ?? []) as [
      [Error | null, string | null],
      [Error | null, string[]],
    ];
    if (stockError || recordsError) throw stockError ?? recordsError;
    if (stock === null) return undefined;
    return {
      remaining: Number(stock),
      reservedBy: new Set(records.map((record) => parseReservationRecord('', record).userId)),
    };
  }

  async snapshot(saleId: string): Promise<SaleRedisSnapshot> {
    const sale = this.keys.sale(saleId);
    // One MULTI (all keys share the sale's hash tag): the ledgers are read at one instant.
    const replies = (await this.client
      .multi()
      .get(sale.stock)
      .hgetall(sale.reservations)
      .hgetall(sale.returned)
      .hmget(sale.meta, 'epoch', 'reservedUnits')
      .hgetall(sale.grants)
      .exec()) as [Error | null, unknown][] | null;
    if (!replies) throw new Error('Redis aborted the snapshot transaction');
    const failed = replies.find(([error]) => error);
    if (failed) throw failed[0];
    const [stock, reservations, returned, meta, grants] = replies.map(([, value]) => value) as [
      string | null,
      Record<string, string>,
      Record<string, string>,
      (string | null)[],
      Record<string, string>,
    ];
    return {
      loaded: stock !== null && meta[0] !== null,
      epoch: Number(meta[0] ?? 0),
      reservedUnits: Number(meta[1] ?? 0),
      grants: new Map(Object.entries(grants).map(([leaseId, units]) => [leaseId, Number(units)])),
      remaining: Number(stock ?? 0),
      reservations: Object.entries(reservations).map(([orderNo, value]) => parseReservationRecord(orderNo, value)),
      returned: new Map(Object.entries(returned).map(([orderNo, units]) => [orderNo, Number(units)])),
    };
  }

  /**
   * Reservations of the sale not written to MySQL yet: the entries of its hand-off stream (a worker
   * deletes an entry once its order is written).
   */
  async handoffBacklog(saleId: string): Promise<number> {
    return this.client.xlen(this.keys.sale(saleId).handoff);
  }

  /** Entries in the sale's hand-off stream, and how many of them a worker claimed and has not acknowledged. */
  async handoffDepth(saleId: string): Promise<{ unwritten: number; beingWritten: number }> {
    const key = this.keys.sale(saleId).handoff;
    const replies = await this.client.multi().xlen(key).xpending(key, HANDOFF_GROUP).exec();
    const [[lengthError, length], [pendingError, pending]] = (replies ?? []) as [
      [Error | null, number],
      [Error | null, [number, ...unknown[]] | null],
    ];
    if (lengthError) throw lengthError;
    // No group yet (no worker read this sale's stream so far): nothing is being written.
    if (pendingError && !pendingError.message.includes('NOGROUP')) throw pendingError;
    return { unwritten: Number(length ?? 0), beingWritten: pendingError ? 0 : Number(pending?.[0] ?? 0) };
  }

  /** The order numbers waiting in the sale's hand-off stream, read at one instant. */
  async handoffOrderNumbers(saleId: string): Promise<Set<string>> {
    const entries = (await this.client.xrange(this.keys.sale(saleId).handoff, '-', '+')) as [string, string[]][];
    const orderNos = new Set<string>();
    for (const [, fields] of entries) {
      const value = fields[1];
      if (value) orderNos.add(value.slice(0, value.indexOf('|')));
    }
    return orderNos;
  }

  /**
   * Retention: every key of the sale expires at `atMs` (epoch ms; one in the past deletes them now).
   * Idempotent. For ended sales whose reservations are all written (see SaleRetention in the worker).
   */
  async expireAt(saleId: string, atMs: number): Promise<void> {
    const multi = this.client.multi();
    for (const key of this.keys.sale(saleId).all()) multi.pexpireat(key, atMs);
    await execChecked(multi);
  }

  /** Undoes `expireAt`: a sale whose end was moved into the future again must keep its keys. */
  async clearExpiry(saleId: string): Promise<void> {
    const multi = this.client.multi();
    for (const key of this.keys.sale(saleId).all()) multi.persist(key);
    await execChecked(multi);
  }

  /** Published by the reconciliation job: saleId -> drift. */
  async publishDrift(drifts: ReadonlyMap<string, number>): Promise<void> {
    if (drifts.size === 0) return;
    await this.client.hset(this.keys.reconciliation, Object.fromEntries(drifts));
  }

  /** Every sale's last published drift (saleId -> units). */
  async reconciledDrifts(): Promise<Record<string, string>> {
    return this.client.hgetall(this.keys.reconciliation);
  }

  async lastReconciledDrift(saleId: string): Promise<number | undefined> {
    const value = await this.client.hget(this.keys.reconciliation, saleId);
    return value === null ? undefined : Number(value);
  }

  /** Forget everything Redis knows about a sale (a brand-new sale must not inherit stale keys). */
  async reset(saleId: string): Promise<void> {
    await this.client.del(...this.keys.sale(saleId).all());
  }
}

async function execChecked(multi: ChainableCommander): Promise<void> {
  const replies = (await multi.exec()) as [Error | null, unknown][] | null;
  if (!replies) throw new Error('Redis aborted the transaction');
  const failed = replies.find(([error]) => error);
  if (failed) throw failed[0];
}
