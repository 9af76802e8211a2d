import type { SaleDefinition } from '@flash-sale/domain';
import { type RoomStockReading, WaitingRoomScripts } from '@flash-sale/redis';
import { Injectable } from '@nestjs/common';
import { SalesService } from '../sales/sales.service';

/**
 * A reading of the sale's units: `settled` false while some are in doubt or out of reach (see
 * SalesService.remainingSettled) — the room then admits for what `remaining` says, but says `sold_out`
 * to nobody.
 */
export type RoomReading = RoomStockReading & { settled: boolean; at: number };

/** How old a reading of a sale's remaining units may be when a poll uses it. */
const FRESH_MS = 500;
/**
 * How old a reading may be to answer a poll while the next one is read. Older (no poll came for a
 * while: after a sell-out buyers poll seldom), units may have come back since — an expired or cancelled
 * order — and the poll waits for the new reading rather than say `sold_out` from the old one.
 */
const SERVE_WHILE_READING_MS = 2 * FRESH_MS;

/**
 * The units a room's sale has left, as its polls need them: to admit no more shoppers than units remain
 * and to tell every waiting buyer `sold_out` without a Redis command. One reading per sale at a time,
 * refreshed in the background once older than FRESH_MS, so a steady flow of polls never waits for MySQL
 * after the first (a poll after a lull waits for one read: see SERVE_WHILE_READING_MS).
 *
 * A reading carries the room's `sold` read just before it: the room takes off it whatever its buyers bought
 * since, on any instance (room-*.lua), so a reading that is a moment old admits nobody for a unit already
 * gone. A purchase made between the two reads is counted twice: the room then admits one shopper fewer
 * until the next reading, never one more.
 */
@Injectable()
export class RoomStock {
  private readonly readings = new Map<string, RoomReading>();
  private readonly reading = new Map<string, Promise<RoomReading>>();

  constructor(
    private readonly sales: SalesService,
    private readonly scripts: WaitingRoomScripts,
  ) {}

  async of(sale: SaleDefinition, now = Date.now()): Promise<RoomReading> {
    const last = this.readings.get(sale.id);
    if (last && now - last.at < FRESH_MS) return last;
    const refresh = this.refresh(sale);
    if (!last) return refresh;
    if (now - last.at < SERVE_WHILE_READING_MS) {
      refresh.catch(() => undefined); // the last reading serves meanwhile; the next poll tries again
      return last;
    }
    // Too old to answer on its own. If the stock cannot be read now, the old reading still admits (the
    // room's own count takes off what was bought since), but it says `sold_out` to nobody.
    return refresh.catch(() => ({ ...last, settled: false }));
  }

  /**
   * A buyer of the sale just bought (or was refused for good) on this instance: the next poll reads the
   * stock afresh, so that `sold_out` is told at once when that was the last unit.
   */
  forget(saleId: string): void {
    this.readings.delete(saleId);
  }

  private refresh(sale: SaleDefinition): Promise<RoomReading> {
    let pending = this.reading.get(sale.id);
    if (!pending) {
      pending = this.read(sale).finally(() => this.reading.delete(sale.id));
      this.reading.set(sale.id, pending);
    }
    return pending;
  }

  private async read(sale: SaleDefinition): Promise<RoomReading> {
    const soldAtReading = await this.scripts.soldUnits(sale.id);
    const { remaining, settled } = await this.sales.remainingSettled(sale);
    const reading = { remaining, soldAtReading, settled, at: Date.now() };
    this.readings.set(sale.id, reading);
    if (this.readings.size > 10_000) this.readings.clear();
    return reading;
  }
}
