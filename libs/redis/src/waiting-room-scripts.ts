import type { SaleDefinition } from '@flash-sale/domain';
import { defineScripts, type ScriptedClient } from './lua-source';
import type { RedisClient } from './redis-client';
import type { KeyBuilder } from './sale-keys';

const SCRIPTS = {
  fsRoomJoin: { file: 'room-join-5.lua', numberOfKeys: 5 },
  fsRoomPoll: { file: 'room-poll-5.lua', numberOfKeys: 5 },
  fsRoomLeave: { file: 'room-leave-5.lua', numberOfKeys: 5 },
  fsRoomState: { file: 'room-state-5.lua', numberOfKeys: 5 },
  fsRoomConfigure: { file: 'room-configure-5.lua', numberOfKeys: 5 },
  fsRoomRestore: { file: 'room-restore-5.lua', numberOfKeys: 5 },
} as const;

/** Buyers written back per call of the restore script: each call is short, so Redis serves others between them. */
const RESTORE_CHUNK = 500;

/** A room's settings as Redis holds them (docs/architecture.md "The waiting room"). */
export interface RoomSettings {
  admitPerSecond: number;
  /** 0: no cap. */
  maxShopping: number;
  passMs: number;
  startsAtMs: number;
  /** The room's keys live until then: after the sale's end. */
  expireAtMs: number;
}

/** A room's keys outlive its sale by this much: a late poll still finds its ticket and answers `ended`. */
const KEEP_AFTER_END_MS = 3_600_000;

/** What Redis holds of a sale's room, from the sale as MySQL holds it; undefined for a sale without one. */
export function roomSettingsOf(sale: SaleDefinition): RoomSettings | undefined {
  const room = sale.waitingRoom;
  if (!room) return undefined;
  return {
    admitPerSecond: room.admitPerSecond,
    maxShopping: room.maxShopping ?? 0,
    passMs: room.passSeconds * 1000,
    startsAtMs: sale.startsAt.getTime(),
    expireAtMs: sale.endsAt.getTime() + KEEP_AFTER_END_MS,
  };
}

/** A buyer's place as the room scripts answer it; times in ms of Redis's clock. */
export interface RoomTicket {
  state: 'waiting' | 'admitted';
  /** 0 before the opening (the order is not drawn yet). */
  position: number;
  etaMs: number;
  pollAfterMs: number;
  /** When admitted: when the buyer's pass expires (epoch ms). */
  passExpiresMs: number;
  waiting: number;
  /** A waiting buyer's place in line (the room's score of them); undefined when admitted. */
  place?: number;
}

/** A buyer as MySQL recorded them in a room (room_places), for `restore`. */
export interface RecordedRoomBuyer {
  userId: string;
  place: number;
  /** When their pass expires (ms), if they were admitted. */
  passExpiresMs?: number;
  /** Their pass is spent: MySQL holds an order of theirs. */
  bought: boolean;
}

/** The sale's remaining units as an API instance last read them, and the room's `sold` just before. */
export interface RoomStockReading {
  remaining: number;
  soldAtReading: number;
}

export type RoomJoinResult = RoomTicket | { kind: 'no-room' };
export type RoomPollResult =
  RoomTicket | { kind: 'no-room' } | { kind: 'no-ticket' } | { kind: 'too-soon'; waitMs: number };

export interface RoomState {
  waiting: number;
  shopping: number;
  admitted: number;
  admitPerSecond: number;
  maxShopping: number;
  measuredAdmitPerSecond: number;
}

/**
 * The only caller of the waiting-room scripts (`room-*.lua`, rules in `lua/includes/room.lua`). A room's
 * keys share the hash tag `{room:<saleId>}`: one cluster slot, apart from the sale's stock buckets, so
 * the room's traffic never lands on the slot that sells.
 */
export class WaitingRoomScripts {
  private readonly scripted: ScriptedClient<keyof typeof SCRIPTS>;

  constructor(
    private readonly client: RedisClient,
    private readonly keys: KeyBuilder,
  ) {
    this.scripted = defineScripts(client, SCRIPTS);
  }

  async configure(saleId: string, settings: RoomSettings): Promise<void> {
    await this.scripted.fsRoomConfigure(
      ...this.roomKeys(saleId),
      settings.admitPerSecond,
      settings.maxShopping,
      settings.passMs,
      settings.startsAtMs,
      settings.expireAtMs,
    );
  }

  /**
   * Writes the sale's room settings as MySQL holds them: at creation, on an admin's edit (the new rate and
   * cap apply to the next admission on every API instance), and after Redis lost them. A sale whose room
   * the admin removed keeps the room's state (who waits, who holds a pass): added again, the room goes on
   * with the same line and the same cap.
   */
  async write(sale: SaleDefinition): Promise<void> {
    const settings = roomSettingsOf(sale);
    if (settings) await this.configure(sale.id, settings);
  }

  /**
   * Writes back every place and pass MySQL recorded that Redis lacks (room-restore-5.lua), in chunks;
   * returns how many buyers it wrote back. The room's settings must be there (`write`).
   */
  async restore(saleId: string, buyers: readonly RecordedRoomBuyer[]): Promise<number> {
    let written = 0;
    for (let from = 0; from < buyers.length; from += RESTORE_CHUNK) {
      const args = buyers
        .slice(from, from + RESTORE_CHUNK)
        .flatMap((buyer) => [buyer.userId, String(buyer.place), buyer.passExpiresMs ?? 0, buyer.bought ? 1 : 0]);
      written += Number(await this.scripted.fsRoomRestore(...this.roomKeys(saleId), ...args));
    }
    return written;
  }

  /** Deletes every key of the room: for a new sale only, whose id a reset database may give again. */
  async remove(saleId: string): Promise<void> {
    await this.scripted.fsRoomConfigure(...this.roomKeys(saleId), 'remove', 0, 0, 0, 0);
  }

  /**
   * `stock`: the sale's units as the caller read them, with the room's `soldUnits` read just before.
   * `draw`: the buyer's place if they join before the opening; `jitter`: for the poll advice; both in [0, 1).
   */
  async join(
    saleId: string,
    userId: string,
    stock: RoomStockReading,
    draw: number,
    jitter: number,
  ): Promise<RoomJoinResult> {
    const reply = await this.scripted.fsRoomJoin(
      ...this.roomKeys(saleId),
      userId,
      String(draw),
      stock.remaining,
      String(jitter),
      stock.soldAtReading,
    );
    return reply === 'no-room' ? { kind: 'no-room' } : toTicket(reply as unknown[]);
  }

  async poll(saleId: string, userId: string, stock: RoomStockReading, jitter: number): Promise<RoomPollResult> {
    const reply = await this.scripted.fsRoomPoll(
      ...this.roomKeys(saleId),
      userId,
      stock.remaining,
      String(jitter),
      stock.soldAtReading,
    );
    if (reply === 'no-room' || reply === 'no-ticket') return { kind: reply };
    const fields = reply as unknown[];
    if (fields[0] === 'too-soon') return { kind: 'too-soon', waitMs: Number(fields[1]) };
    return toTicket(fields);
  }

  /**
   * The buyer's turn is done (bought `unitsBought`, or refused for good: 0): they stop counting against the
   * cap, and what they bought is counted in the room's `sold` (see `soldUnits`).
   */
  async leave(saleId: string, userId: string, unitsBought: number): Promise<void> {
    await this.scripted.fsRoomLeave(...this.roomKeys(saleId), userId, unitsBought);
  }

  /**
   * Units the room's buyers bought so far. Read just before the sale's remaining units, it lets the room
   * take off that reading what was bought after it (room-join/poll scripts).
   */
  async soldUnits(saleId: string): Promise<number> {
    return Number((await this.client.hget(this.keys.room(saleId)[0], 'sold')) ?? 0);
  }

  async state(saleId: string): Promise<RoomState | undefined> {
    const reply = await this.scripted.fsRoomState(...this.roomKeys(saleId));
    if (reply === 'no-room') return undefined;
    const [waiting, shopping, admitted, admitPerSecond, maxShopping, measured] = reply as unknown[];
    return {
      waiting: Number(waiting),
      shopping: Number(shopping),
      admitted: Number(admitted),
      admitPerSecond: Number(admitPerSecond),
      maxShopping: Number(maxShopping),
      measuredAdmitPerSecond: Number(measured),
    };
  }

  private roomKeys(saleId: string): [string, string, string, string, string] {
    return this.keys.room(saleId);
  }
}

function toTicket(fields: unknown[]): RoomTicket {
  const [state, position, etaMs, pollAfterMs, passExpiresMs, waiting, place] = fields;
  const ticket: RoomTicket = {
    state: state === 'admitted' ? 'admitted' : 'waiting',
    position: Number(position),
    etaMs: Number(etaMs),
    pollAfterMs: Number(pollAfterMs),
    passExpiresMs: Number(passExpiresMs),
    waiting: Number(waiting),
  };
  if (place !== undefined && place !== '') ticket.place = Number(place);
  return ticket;
}
