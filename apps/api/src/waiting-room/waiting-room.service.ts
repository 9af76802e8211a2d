import { type AppConfig, InjectAppConfig } from '@flash-sale/config';
import type { Ticket, WaitingRoomState } from '@flash-sale/contract';
import { DomainError, ErrorCode, type SaleDefinition } from '@flash-sale/domain';
import { type RoomTicket, WaitingRoomScripts } from '@flash-sale/redis';
import { Injectable, Logger } from '@nestjs/common';
import { randomInt } from 'node:crypto';
import { rateLimited } from '../protection/retry-later.error';
import { DurableAck } from '../durability/durable-ack';
import { SaleCatalog } from '../sales/sale-catalog';
import { MetricsService } from '../metrics/metrics.service';
import { AdmissionPassCodec } from './admission-pass-codec';
import { RoomRecord } from './room-record';
import { RoomStock } from './room-stock';

/** How soon a buyer told `sold_out` or `ended` should look again: units may come back, an end is final. */
const POLL_AFTER_SOLD_OUT_MS = 10_000;
const POLL_AFTER_ENDED_MS = 60_000;

/**
 * A sale's waiting room (docs/architecture.md "The waiting room"): joins, polls, the admin's view, the
 * admission pass the token route asks for, and the end of a buyer's turn. The room's rules — the
 * shuffle at the opening, the rate, the cap, the stock, the poll advice — are Redis's (room-*.lua, one
 * script per call); this class answers what needs no Redis (ended, sold out) and signs passes.
 */
@Injectable()
export class WaitingRoom {
  private readonly logger = new Logger(WaitingRoom.name);
  private readonly passes: AdmissionPassCodec;

  constructor(
    private readonly catalog: SaleCatalog,
    private readonly scripts: WaitingRoomScripts,
    private readonly stock: RoomStock,
    private readonly record: RoomRecord,
    private readonly metrics: MetricsService,
    private readonly durableAck: DurableAck,
    @InjectAppConfig() config: AppConfig,
  ) {
    this.passes = new AdmissionPassCodec(config.auth.jwtSecret);
  }

  /** `POST /api/sales/:id/queue`: the buyer's ticket, the same place when they joined before. */
  async join(userId: string, saleId: string): Promise<Ticket> {
    const sale = await this.roomSale(saleId);
    const final = await this.finalState(sale);
    if (final) return final;
    const stock = await this.stock.of(sale);
    this.durableAck.admit(() => ({ roomOf: sale.id }));
    const writtenOn = this.durableAck.masterNow({ roomOf: sale.id });
    const joined = await this.withRoom(sale, () => this.scripts.join(sale.id, userId, stock, draw(), draw()));
    await this.keep(sale, userId, joined as RoomTicket, writtenOn);
    return this.answer(sale, userId, joined as RoomTicket);
  }

  /** `GET /api/sales/:id/queue`: 404 without a ticket, 429 sooner than the last advice allows. */
  async poll(userId: string, saleId: string): Promise<Ticket> {
    const sale = await this.roomSale(saleId);
    const final = await this.finalState(sale);
    if (final) return final;
    const stock = await this.stock.of(sale);
    this.durableAck.admit(() => ({ roomOf: sale.id }));
    const writtenOn = this.durableAck.masterNow({ roomOf: sale.id });
    const polled = await this.withRoom(sale, () => this.scripts.poll(sale.id, userId, stock, draw()));
    if ('kind' in polled) {
      this.metrics.countRoomAnswer(polled.kind);
      if (polled.kind === 'too-soon') throw rateLimited(polled.waitMs);
      throw new DomainError(ErrorCode.NotFound, 'No ticket in this waiting room: join it first');
    }
    await this.keep(sale, userId, polled, writtenOn);
    return this.answer(sale, userId, polled);
  }

  /**
   * Before a buyer hears of a new place or pass: it is recorded in MySQL (RoomRecord), and with the
   * durable acknowledgement a replica holds it, so a failover to that replica cannot forget it — the promoted
   * master's room counts every pass its buyers were told of (the cap, the units) and every place (the
   * order). An answer that repeats what was recorded and confirmed before waits for neither. `writtenOn`:
   * the room's master as its script was sent (DurableAck.confirm).
   */
  private async keep(sale: SaleDefinition, userId: string, ticket: RoomTicket, writtenOn?: string): Promise<void> {
    if (!(await this.record.record(sale.id, userId, ticket)) || !this.durableAck.enabled) return;
    try {
      await this.durableAck.confirm({ roomOf: sale.id }, writtenOn);
    } catch (error) {
      // Not told: the buyer's next join or poll confirms it again before telling them.
      this.record.forget(sale.id, userId);
      throw error;
    }
  }

  /** `GET /api/admin/sales/:id/queue`. */
  async state(saleId: string): Promise<WaitingRoomState> {
    const sale = await this.roomSale(saleId);
    const state = await this.withRoom(sale, async () => (await this.scripts.state(sale.id)) ?? { kind: 'no-room' });
    if ('kind' in state) throw new Error('unreachable: the room was configured');
    const rate = state.measuredAdmitPerSecond > 0.01 ? state.measuredAdmitPerSecond : state.admitPerSecond;
    return {
      waiting: state.waiting,
      admitted: state.admitted,
      shopping: state.shopping,
      admitPerSecond: state.admitPerSecond,
      maxShopping: state.maxShopping > 0 ? state.maxShopping : null,
      measuredAdmitPerSecond: Math.round(state.measuredAdmitPerSecond * 10) / 10,
      // Sold out or ended: nobody will be admitted, and those still in line have been told.
      estimatedDrainSeconds: (await this.over(sale)) ? 0 : Math.ceil(state.waiting / rate),
    };
  }

  /**
   * The token route's check (docs/api.md "Buying"): a sale with a room issues a submit token only
   * against a pass signed for this buyer and sale and unexpired. Checked locally: no Redis command.
   */
  requireAdmission(sale: SaleDefinition, userId: string, pass: unknown): void {
    if (!sale.waitingRoom) return;
    if (this.passes.verify(pass, sale.id, userId)) return;
    throw new DomainError(
      ErrorCode.AdmissionRequired,
      pass === undefined
        ? 'This sale has a waiting room: join it and buy with the admission pass your ticket carries'
        : 'The admission pass is not valid for you and this sale, or has expired: join the waiting room again',
    );
  }

  /**
   * The buyer's turn in the room is over (bought `unitsBought`, or refused for good: 0): they stop counting
   * against its cap, and the room counts the units gone. Off the purchase's answer: a lost call only keeps their place in the cap until the pass expires.
   */
  buyerDone(sale: SaleDefinition, userId: string, unitsBought: number): void {
    if (!sale.waitingRoom) return;
    this.stock.forget(sale.id);
    this.scripts.leave(sale.id, userId, unitsBought).catch((error: Error) => {
      this.logger.warn(`Waiting room of sale ${sale.id}: could not end a turn: ${error.message}`);
    });
  }

  private async roomSale(saleId: string): Promise<SaleDefinition> {
    const sale = await this.catalog.get(saleId);
    if (!sale.waitingRoom) throw new DomainError(ErrorCode.NoWaitingRoom, 'This sale has no waiting room');
    return sale;
  }

  /** `ended` or `sold_out`, answered the same to every ticket without asking Redis; else undefined. */
  private async finalState(sale: SaleDefinition): Promise<Ticket | undefined> {
    const over = await this.over(sale);
    if (!over) return undefined;
    this.metrics.countRoomAnswer(over);
    return { state: over, pollAfterMs: over === 'ended' ? POLL_AFTER_ENDED_MS : POLL_AFTER_SOLD_OUT_MS };
  }

  /**
   * Whether the sale has ended or, open, has no unit left — settled: units in doubt after a Redis loss, or
   * a Redis that cannot say, are "wait", never `sold_out` (the sense of `410 SOLD_OUT`).
   */
  private async over(sale: SaleDefinition, now = Date.now()): Promise<'ended' | 'sold_out' | undefined> {
    if (now >= sale.endsAt.getTime()) return 'ended';
    if (now < sale.startsAt.getTime()) return undefined;
    const reading = await this.stock.of(sale, now);
    return reading.remaining <= 0 && reading.settled ? 'sold_out' : undefined;
  }

  /**
   * Runs a room script, the room written back from MySQL first if this process's Redis connection was
   * lost since it last was (RoomRecord); if Redis holds no room for the sale (created while Redis was
   * away, or Redis lost it since), writes it back and runs the script again.
   */
  private async withRoom<T extends object>(
    sale: SaleDefinition,
    call: () => Promise<T | { kind: 'no-room' }>,
  ): Promise<T> {
    await this.record.ensureRestored(sale);
    const first = await call();
    if (!('kind' in first) || first.kind !== 'no-room') return first as T;
    await this.record.restore(sale);
    const second = await call();
    if ('kind' in second && second.kind === 'no-room')
      throw new Error(`The room of sale ${sale.id} could not be written`);
    return second as T;
  }

  private answer(sale: SaleDefinition, userId: string, ticket: RoomTicket): Ticket {
    this.metrics.countRoomAnswer(ticket.state);
    if (ticket.state === 'admitted') {
      return {
        state: 'admitted',
        pollAfterMs: ticket.pollAfterMs,
        pass: this.passes.issue(sale.id, userId, ticket.passExpiresMs),
        passExpiresAt: new Date(ticket.passExpiresMs).toISOString(),
        waiting: ticket.waiting,
      };
    }
    const waiting: Ticket = {
      state: 'waiting',
      estimatedWaitSeconds: Math.ceil(ticket.etaMs / 1000),
      pollAfterMs: ticket.pollAfterMs,
      waiting: ticket.waiting,
    };
    if (ticket.position > 0) waiting.position = ticket.position;
    else waiting.opensAt = sale.startsAt.toISOString();
    return waiting;
  }
}

/** A uniform draw in [0, 1) from the OS's generator: a buyer's place in the shuffle must not be guessable. */
function draw(): number {
  return randomInt(0, 2 ** 47) / 2 ** 47;
}
