import type { HandedOffOrder } from '@flash-sale/domain';
import type { RedisClient } from './redis-client';
import { redisReplyCode } from './redis-errors';
import { parseReservationRecord, type ReservationRecord } from './reservation-record';
import { HANDOFF_GROUP, type KeyBuilder, type SaleBucket } from './sale-keys';

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

/** Raw stream entries as ioredis returns them: [id, [field, value, …]] (fields null for a deleted entry). */
type RawEntry = [string, string[] | null];

/**
 * The workers' side of a bucket's hand-off stream (the reservation script appends to it; see
 * reserve-9.lua; so does give-back-4.lua). Entries are read through the consumer group `HANDOFF_GROUP`, each worker process
 * being one consumer; an entry is acknowledged and deleted in one step once its order is written, so
 * the stream only ever holds what is not written yet.
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
    const reply = (await this.withGroup(bucket, () =>
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

  private async readGroup(bucket: SaleBucket, consumer: string, count: number, from: string): Promise<HandoffEntry[]> {
    const key = this.keys.bucket(bucket).handoff;
    const reply = (await this.withGroup(bucket, () =>
      this.client.xreadgroup('GROUP', HANDOFF_GROUP, consumer, 'COUNT', count, 'STREAMS', key, from),
    )) as [string, RawEntry[]][] | null;
    return (reply?.[0]?.[1] ?? []).map((raw) => toEntry(bucket, raw));
  }

  /** Runs a group command, creating the group first if the sale's stream has none yet. */
  private async withGroup<T>(bucket: SaleBucket, command: () => Promise<T>): Promise<T> {
    try {
      return await command();
    } catch (error) {
      if (redisReplyCode(error) !== 'NOGROUP') throw error;
      await this.createGroup(bucket);
      return command();
    }
  }

  /** From id 0: every entry already in the stream is delivered to the new group. */
  private async createGroup(bucket: SaleBucket): Promise<void> {
    try {
      await this.client.xgroup('CREATE', this.keys.bucket(bucket).handoff, HANDOFF_GROUP, '0', 'MKSTREAM');
    } catch (error) {
      if (redisReplyCode(error) !== 'BUSYGROUP') throw error;
    }
  }
}

function toEntry(bucket: SaleBucket, [id, fields]: RawEntry): HandoffEntry {
  const value = fields?.[1];
  if (value === undefined) return { id };
  if (fields?.[0] === 'g') return { id, giveBack: parseGiveBackValue(value) };
  const order = parseHandoffValue(bucket.saleId, value);
  return order ? { id, order: bucket.count > 1 ? { ...order, bucket: bucket.index } : order } : { id };
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
export function parseHandoffValue(saleId: string, value: string): HandedOffOrder | undefined {
  const parts = value.split('|');
  const [orderNo] = parts;
  if (parts.length < 7 || !orderNo) return undefined;
  let record: ReservationRecord;
  try {
    record = parseReservationRecord(orderNo, parts.slice(1, 6).join('|'));
  } catch {
    return undefined;
  }
  const valid =
    record.userId !== '' &&
    Number.isInteger(record.quantity) &&
    record.quantity > 0 &&
    Number.isInteger(record.slot) &&
    !Number.isNaN(record.reservedAt.getTime());
  return valid ? { ...record, saleId, submitToken: parts.slice(6).join('|') || null } : undefined;
}
