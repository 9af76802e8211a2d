import type { SaleDefinition } from '@flash-sale/domain';
import { Injectable } from '@nestjs/common';
import { SalesService } from '../sales/sales.service';

/** How old a reading of a sale's remaining units may be when a poll uses it. */
const FRESH_MS = 500;

interface Reading {
  remaining: number;
  at: number;
}

/**
 * The units a room's sale has left, as its polls need them: to admit no more shoppers than units remain
 * and to tell every waiting buyer `sold_out` without a Redis command. One reading per sale at a time,
 * refreshed in the background once older than FRESH_MS, so polls never wait for MySQL after the first.
 */
@Injectable()
export class RoomStock {
  private readonly readings = new Map<string, Reading>();
  private readonly reading = new Map<string, Promise<number>>();

  constructor(private readonly sales: SalesService) {}

  async remaining(sale: SaleDefinition, now = Date.now()): Promise<number> {
    const last = this.readings.get(sale.id);
    if (last && now - last.at < FRESH_MS) return last.remaining;
    const refresh = this.refresh(sale);
    if (!last) return refresh;
    refresh.catch(() => undefined); // the last reading serves meanwhile; the next poll tries again
    return last.remaining;
  }

  /**
   * A buyer of the sale just bought (or was refused for good) on this instance: the next poll reads the
   * stock afresh rather than admit against units that are gone. Other instances' readings catch up
   * within FRESH_MS.
   */
  forget(saleId: string): void {
    this.readings.delete(saleId);
  }

  private refresh(sale: SaleDefinition): Promise<number> {
    let pending = this.reading.get(sale.id);
    if (!pending) {
      pending = this.sales
        .remainingUnits(sale)
        .then((remaining) => {
          this.readings.set(sale.id, { remaining, at: Date.now() });
          if (this.readings.size > 10_000) this.readings.clear();
          return remaining;
        })
        .finally(() => this.reading.delete(sale.id));
      this.reading.set(sale.id, pending);
    }
    return pending;
  }
}
