import { errorMessage, type HandedOffOrder, type SaleLayout } from '@flash-sale/domain';
import type { RedisClient } from './redis-client';
import { redisReplyCode } from './redis-errors';
import { reservationRecordAt } from './reservation-record';
import { bucketsOf, HANDOFF_GROUP, type KeyBuilder, type SaleBucket } from './sale-keys';

/** Units a bucket gave back to MySQL (give-back-4.lua), to be added to the sale's `available`. */
export interface GiveBack {
  returnKey: string;
  units: number;
  /** The incarnation whose leased units they were. */
  epoch: number;
}

/**
 * One entry of a bucket's hand-off stream: the stream id and the order it carries, or the give-back
 * (neither when the entry is unreadable).
 */
export interface HandoffEntry {
  id: string;
  order?: HandedOffOrder;
  giveBack?: GiveBack;
}

/** The hand-off stream's field for an order (reserve-9.lua); give-backs use `g` (give-back-4.lua). */
const ORDER_FIELD = 'r';

/** Raw stream entries as ioredis returns them: [id, [field, value, …]] (fields null for a deleted entry). */
type RawEntry = [string, string[] | null];

/**
 * A sale's hand-off streams, one per bucket (the reservation script appends to them, see reserve-9.lua;
 * so does give-back-4.lua). The workers read their entries through the consumer group `HANDOFF_GROUP`,
 * each worker process being one consumer; an entry is acknowledged and deleted in one step once its
 * order is written, so a stream only ever holds what is not written yet — which is what the audit, the
 * metrics, load shedding and the lifecycle jobs count here (`backlog`, `depth`, `orderNumbers`).
 */
export class HandoffStream {
  constructor(
    private readonly client: RedisClient,
    private readonly keys: KeyBuilder,
  ) {}

  /** Entries no consumer of the group has been given yet. */
  async readNew(bucket: SaleBucket, consumer: string, count: number): Promise<HandoffEntry[]> {
    return this.readGroup(bucket, consumer, count, '>');
  }

  /** Entries this consumer was given and has not acknowledged (an attempt that failed), after `afterId`. */
  async readOwnPending(bucket: SaleBucket, consumer: string, count: number, afterId = '0'): Promise<HandoffEntry[]> {
    return this.readGroup(bucket, consumer, count, afterId);
  }

  /**
   * Takes over entries another consumer was given more than `minIdleMs` ago and never acknowledged
   * (its worker died, or stopped mid-batch). Returns them and the cursor to continue from ('0-0': done).
   */
  async claimIdle(
    bucket: SaleBucket,
    consumer: string,
    minIdleMs: number,
    count: number,
    cursor = '0-0',
  ): Promise<{ entries: HandoffEntry[]; cursor: string }> {
    const reply = (await this.withGroup(
      bucket,
      () =>
        this.client.call(
          'XAUTOCLAIM',
          this.keys.bucket(bucket).handoff,
          HANDOFF_GROUP,
          consumer,
          minIdleMs,
          cursor,
          'COUNT',
          count,
        ),
      ['0-0', []],
    )) as [string, RawEntry[], string[]?];
    return { cursor: reply[0], entries: reply[1].map((raw) => toEntry(bucket, raw)) };
  }

  /** The orders of these entries are written: acknowledge and delete them, atomically. */
  async acknowledge(bucket: SaleBucket, ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    const key = this.keys.bucket(bucket).handoff;
    const replies = await this.client
      .multi()
      .xack(key, HANDOFF_GROUP, ...ids)
      .xdel(key, ...ids)
      .exec();
    const failed = replies?.find(([error]) => error);
    if (!replies || failed) throw failed?.[0] ?? new Error('Redis aborted the hand-off acknowledgement');
  }

  /**
   * Removes one entry from a bucket's stream: a give-back its process applied to MySQL itself,
   * so no worker has to be woken for it (one that read it already applies it again, which changes nothing).
   */
  async dropEntry(bucket: SaleBucket, entryId: string): Promise<void> {
    await this.client.xdel(this.keys.bucket(bucket).handoff, entryId);
  }

  /**
   * Reservations of the sale not written to MySQL yet: the entries of its hand-off stream (a worker
   * deletes an entry once its order is written).
   */
  async backlog(sale: SaleLayout): Promise<number> {
    const lengths = await Promise.all(bucketsOf(sale).map((bucket) => this.bucketBacklog(bucket)));
    return lengths.reduce((sum, length) => sum + length, 0);
  }

  /** Entries in one bucket's hand-off stream. */
  async bucketBacklog(bucket: SaleBucket): Promise<number> {
    return this.client.xlen(this.keys.bucket(bucket).handoff);
  }

  /** Entries in the sale's hand-off streams, and how many of them a worker claimed and has not acknowledged. */
  async depth(sale: SaleLayout): Promise<{ unwritten: number; beingWritten: number }> {
    const depths = await Promise.all(bucketsOf(sale).map((bucket) => this.bucketDepth(bucket)));
    return {
      unwritten: depths.reduce((sum, depth) => sum + depth.unwritten, 0),
      beingWritten: depths.reduce((sum, depth) => sum + depth.beingWritten, 0),
    };
  }

  private async bucketDepth(bucket: SaleBucket): Promise<{ unwritten: number; beingWritten: number }> {
    const key = this.keys.bucket(bucket).handoff;
    const replies = await this.client.multi().xlen(key).xpending(key, HANDOFF_GROUP).exec();
    const [[lengthError, length], [pendingError, pending]] = (replies ?? []) as [
      [Error | null, number],
      [Error | null, [number, ...unknown[]] | null],
    ];
    if (lengthError) throw lengthError;
    // No group yet (no worker read this sale's stream so far): nothing is being written.
    if (pendingError && redisReplyCode(pendingError) !== 'NOGROUP') throw pendingError;
    return { unwritten: Number(length ?? 0), beingWritten: pendingError ? 0 : Number(pending?.[0] ?? 0) };
  }

  /** The order numbers waiting in the sale's hand-off streams, each stream read at one instant. */
  async orderNumbers(sale: SaleLayout): Promise<Set<string>> {
    const orderNos = new Set<string>();
    for (const bucket of bucketsOf(sale)) {
      const entries = (await this.client.xrange(this.keys.bucket(bucket).handoff, '-', '+')) as [string, string[]][];
      for (const [, fields] of entries) {
        const value = fields[1];
        if (fields[0] === ORDER_FIELD && value) orderNos.add(value.slice(0, value.indexOf('|')));
      }
    }
    return orderNos;
  }

  private async readGroup(bucket: SaleBucket, consumer: string, count: number, from: string): Promise<HandoffEntry[]> {
    const key = this.keys.bucket(bucket).handoff;
    const reply = (await this.withGroup(
      bucket,
      () => this.client.xreadgroup('GROUP', HANDOFF_GROUP, consumer, 'COUNT', count, 'STREAMS', key, from),
      null,
    )) as [string, RawEntry[]][] | null;
    return (reply?.[0]?.[1] ?? []).map((raw) => toEntry(bucket, raw));
  }

  /**
   * Runs a group command, creating the group first if the sale's stream has none yet. A stream that does
   * not exist (its sale's keys were deleted or expired) has nothing to give: `absent` is the answer, and
   * no empty stream is made for it.
   */
  private async withGroup<T>(bucket: SaleBucket, command: () => Promise<T>, absent: T): Promise<T> {
    try {
      return await command();
    } catch (error) {
      if (redisReplyCode(error) !== 'NOGROUP') throw error;
      if (!(await this.createGroup(bucket))) return absent;
      return command();
    }
  }

  /** From id 0: every entry already in the stream is delivered to the new group. False: no such stream. */
  private async createGroup(bucket: SaleBucket): Promise<boolean> {
    try {
      await this.client.xgroup('CREATE', this.keys.bucket(bucket).handoff, HANDOFF_GROUP, '0');
      return true;
    } catch (error) {
      if (redisReplyCode(error) === 'BUSYGROUP') return true;
      if (errorMessage(error).includes('requires the key to exist')) return false;
      throw error;
    }
  }
}

function toEntry(bucket: SaleBucket, [id, fields]: RawEntry): HandoffEntry {
  const value = fields?.[1];
  if (value === undefined) return { id };
  if (fields?.[0] === 'g') return { id, giveBack: parseGiveBackValue(value) };
  const order = parseHandoffValue(bucket.saleId, value, bucket.count > 1 ? bucket.index : undefined);
  return order ? { id, order } : { id };
}

/** "returnKey|units|epoch", as give-back-4.lua writes it. */
function parseGiveBackValue(value: string): GiveBack | undefined {
  const [returnKey, units, epoch] = value.split('|');
  const giveBack = { returnKey: returnKey ?? '', units: Number(units), epoch: Number(epoch) };
  return giveBack.returnKey !== '' && Number.isInteger(giveBack.units) && Number.isInteger(giveBack.epoch)
    ? giveBack
    : undefined;
}

/**
 * "orderNo|<reservation record>|token", as reserve-9.lua writes it: the record is the one the
 * reservations hash holds (reservation-record.ts), and the token goes last since only it could ever
 * contain the separator. Undefined for an entry that does not read as a whole, valid order.
 */
export function parseHandoffValue(saleId: string, value: string, bucket?: number): HandedOffOrder | undefined {
  const parts = value.split('|');
  const [orderNo] = parts;
  if (parts.length < 7 || !orderNo) return undefined;
  const record = reservationRecordAt(orderNo, parts, 1);
  if (
    !record ||
    record.userId === '' ||
    !Number.isInteger(record.quantity) ||
    record.quantity <= 0 ||
    !Number.isInteger(record.slot) ||
    Number.isNaN(record.reservedAt.getTime())
  )
    return undefined;
  // One literal, not a spread of the record: the worker builds one per order it writes.
  const order: HandedOffOrder = {
    orderNo,
    saleId,
    userId: record.userId,
    quantity: record.quantity,
    slot: record.slot,
    reservedAt: record.reservedAt,
    epoch: record.epoch,
    submitToken: (parts.length === 7 ? parts[6] : parts.slice(6).join('|')) || null,
  };
  if (bucket !== undefined) order.bucket = bucket;
  return order;
}
