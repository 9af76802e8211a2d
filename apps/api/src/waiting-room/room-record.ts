import { RoomPlaceRepository } from '@flash-sale/db';
import type { SaleDefinition } from '@flash-sale/domain';
import { RedisConnection, type RoomTicket, WaitingRoomScripts } from '@flash-sale/redis';
import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { type SaleRooms, SalesService } from '../sales/sales.service';

/** Buyers whose recorded place or pass this process remembers, to save rewriting them: a bound on memory. */
const REMEMBERED_BUYERS = 100_000;
/** How long the first record waits for others to share its statement, while none is in flight. */
const GATHER_MS = 2;
/** Records in one statement at most. */
const MAX_BATCH = 500;

/** One buyer's place or pass to record, and the caller waiting for it to be written. */
interface PendingRecord {
  saleId: string;
  userId: string;
  place?: number;
  passExpiresMs?: number;
  written(): void;
  failed(error: unknown): void;
}

/**
 * What a room promised each buyer, kept in MySQL (`room_places`) so that a Redis that loses the room —
 * restarted without its data, an older copy, a failover to a replica that lagged — loses neither the cap
 * nor the order (docs/architecture.md "The waiting room"). Redis runs the room; MySQL is only written
 * when a buyer's place or pass changes, before the buyer hears of it, and only read to write the room
 * back: once per sale after each loss of this process's Redis connection (which every restart, failover
 * or restore causes) and whenever Redis answers that it holds no room. A pass given but not recorded
 * cannot happen; a place given but not recorded (MySQL failed after Redis placed the buyer) is answered
 * as an error, and recorded by the buyer's next join or poll.
 */
@Injectable()
export class RoomRecord implements OnModuleInit, SaleRooms {
  private readonly logger = new Logger(RoomRecord.name);
  /** sale|user → the place or pass expiry this process recorded last. */
  private readonly recorded = new Map<string, string>();
  /** Sales whose room was written back over this process's current Redis connection. */
  private readonly restored = new Set<string>();
  private readonly restoring = new Map<string, Promise<void>>();
  private connectionLosses = 0;
  /**
   * Records waiting for the next statement: a crowd joining at once is written in a few statements, not
   * one each (group commit, as the worker writes orders). Each caller still waits for its own.
   */
  private pending: PendingRecord[] = [];
  private writing = false;
  private gatherTimer?: NodeJS.Timeout;

  constructor(
    private readonly places: RoomPlaceRepository,
    private readonly scripts: WaitingRoomScripts,
    private readonly redis: RedisConnection,
    private readonly sales: SalesService,
  ) {}

  onModuleInit(): void {
    // Creating, editing and preloading a sale write its room through here.
    this.sales.keepRoomsWith(this);
    this.redis.onConnectionLost(() => {
      this.connectionLosses += 1;
      this.restored.clear();
    });
  }

  /** A new sale's room: a database reset under a living Redis may have left one under the same id. */
  async open(sale: SaleDefinition): Promise<void> {
    await this.scripts.remove(sale.id);
    await this.scripts.write(sale);
  }

  /** The room's settings as MySQL holds them (the new rate and cap apply to the next admission everywhere). */
  write(sale: SaleDefinition): Promise<void> {
    return this.scripts.write(sale);
  }

  /** Before the room of `sale` runs a script on this connection: written back from MySQL, once. */
  async ensureRestored(sale: SaleDefinition): Promise<void> {
    if (!this.restored.has(sale.id)) await this.restore(sale);
  }

  /** Writes the room back from MySQL now (its settings first, then every place and pass Redis lacks). */
  restore(sale: SaleDefinition): Promise<void> {
    const running = this.restoring.get(sale.id);
    if (running) return running;
    const losses = this.connectionLosses;
    const restoring = (async () => {
      await this.scripts.write(sale);
      const written = await this.scripts.restore(sale.id, await this.places.placesOf(sale.id));
      if (written > 0) this.logger.warn(`Waiting room of sale ${sale.id}: ${written} buyer(s) written back from MySQL`);
      if (losses === this.connectionLosses) this.restored.add(sale.id);
    })().finally(() => this.restoring.delete(sale.id));
    this.restoring.set(sale.id, restoring);
    return restoring;
  }

  /**
   * Records the buyer's place or pass as the ticket says, unless this process recorded it already; true
   * when it wrote one (a place or pass the buyer may not have been told of yet).
   */
  async record(saleId: string, userId: string, ticket: RoomTicket): Promise<boolean> {
    const key = `${saleId}|${userId}`;
    const admitted = ticket.state === 'admitted';
    const value = admitted ? `pass ${ticket.passExpiresMs}` : `place ${ticket.place}`;
    if (this.recorded.get(key) === value || (!admitted && ticket.place === undefined)) return false;
    await new Promise<void>((written, failed) => {
      this.pending.push(
        admitted
          ? { saleId, userId, passExpiresMs: ticket.passExpiresMs, written, failed }
          : { saleId, userId, place: ticket.place!, written, failed },
      );
      if (!this.writing) this.gatherTimer ??= setTimeout(() => this.flush(), GATHER_MS);
    });
    if (this.recorded.size >= REMEMBERED_BUYERS) this.recorded.clear();
    this.recorded.set(key, value);
    return true;
  }

  /** The buyer's next answer records their place or pass again (its durable acknowledgement failed). */
  forget(saleId: string, userId: string): void {
    this.recorded.delete(`${saleId}|${userId}`);
  }

  /** Writes what is pending (places, then passes), then what gathered meanwhile. */
  private flush(): void {
    clearTimeout(this.gatherTimer);
    this.gatherTimer = undefined;
    const batch = this.pending.splice(0, MAX_BATCH);
    if (batch.length === 0) return;
    this.writing = true;
    const places = batch.filter((record) => record.place !== undefined) as (PendingRecord & { place: number })[];
    const passes = batch.filter((record) => record.passExpiresMs !== undefined) as (PendingRecord & {
      passExpiresMs: number;
    })[];
    void this.places
      .recordPlaces(places)
      .then(() => this.places.recordPasses(passes))
      .then(
        () => batch.forEach((record) => record.written()),
        (error: unknown) => batch.forEach((record) => record.failed(error)),
      )
      .finally(() => {
        this.writing = false;
        if (this.pending.length > 0) this.flush();
      });
  }
}
