import { errorMessage, type SaleLayout } from '@flash-sale/domain';
import { OrdersQueue } from '@flash-sale/queue';
import { SaleActivity } from '@flash-sale/redis';
import { Injectable, Logger } from '@nestjs/common';

/**
 * A nudge is sent this long after the first reservation that needs it, so that the reservations of
 * the next few event-loop turns share it: under load one turn resolves only a couple of scripts, and
 * a BullMQ add costs more than the reservation itself. Small against a purchase's latency.
 */
const NUDGE_WINDOW_MS = 2;

/**
 * Wakes the workers after reservations. The reservation script already handed each order off (it is
 * in the sale's stream); what is left is to make sure a `write-orders` job for the sale runs after it.
 * The reservations of a short window share one nudge per sale — one `addBulk` (deduplicated per sale
 * by BullMQ) plus one mark in the active-sales index — and each purchase waits for the nudge sent
 * after its reservation, so a `202` is never sent before its sale's writer was woken.
 */
@Injectable()
export class WriteOrdersNudge {
  private readonly logger = new Logger(WriteOrdersNudge.name);
  private readonly sales = new Map<string, SaleLayout>();
  private sent: Promise<void> | undefined;

  constructor(
    private readonly orders: OrdersQueue,
    private readonly activity: SaleActivity,
  ) {}

  nudge(sale: SaleLayout): Promise<void> {
    this.sales.set(sale.id, sale);
    // Every reservation resolved before the timer fires joins this nudge.
    this.sent ??= new Promise((resolve) => setTimeout(() => void this.send().then(resolve), NUDGE_WINDOW_MS));
    return this.sent;
  }

  private async send(): Promise<void> {
    const sales = [...this.sales.values()];
    this.sales.clear();
    this.sent = undefined;
    try {
      await Promise.all([this.orders.wakeWriters(sales), this.activity.touch(sales.map((sale) => sale.id))]);
    } catch (error) {
      // The orders are safe in their streams; the worker's hand-off sweep wakes their writer instead.
      this.logger.warn(`Could not nudge the order writers: ${errorMessage(error)}`);
    }
  }
}
