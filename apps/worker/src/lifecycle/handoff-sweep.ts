import { type AppConfig, InjectAppConfig } from '@flash-sale/config';
import { SaleLayouts, SaleRepository } from '@flash-sale/db';
import { OrdersQueue } from '@flash-sale/queue';
import { HandoffStream, SaleActivity } from '@flash-sale/redis';
import { Injectable, Logger } from '@nestjs/common';

/** Sales marked active this recently are checked on every run. */
const ACTIVE_WINDOW_MS = 15 * 60_000;
/** Every sale in its window is checked this often, marked or not. */
const FULL_PASS_EVERY_MS = 5 * 60_000;
/** The full pass includes sales ended this recently: their last hand-offs may still wait. */
const ENDED_WITHIN_MS = 60 * 60_000;

/**
 * The safety net of the hand-off. The reservation and its hand-off entry are one atomic step, and the
 * API nudges the sale's `write-orders` job after every reservation, so nothing waits for this sweep in
 * the common case. It wakes the writer of any sale whose stream still holds entries: one whose job
 * failed all its attempts (MySQL down for long), one whose nudge never reached the queue (an API
 * that died right after the script), one whose worker died mid-batch (the job then takes its entries
 * over once they are idle for HANDOFF_CLAIM_IDLE_MS). It looks at the sales marked active lately, and at
 * every sale in its window only every few minutes: its cost follows activity, not the number of sales.
 */
@Injectable()
export class HandoffSweep {
  private readonly logger = new Logger(HandoffSweep.name);
  private lastFullPassAt = 0;

  constructor(
    private readonly sales: SaleRepository,
    private readonly handoff: HandoffStream,
    private readonly activity: SaleActivity,
    private readonly ordersQueue: OrdersQueue,
    private readonly layouts: SaleLayouts,
    @InjectAppConfig() private readonly config: AppConfig,
  ) {}

  /** Returns how many sales with unwritten hand-offs it nudged. */
  async run(): Promise<number> {
    const now = Date.now();
    const saleIds = new Set(await this.activity.activeSince(now - ACTIVE_WINDOW_MS));
    if (now - this.lastFullPassAt >= FULL_PASS_EVERY_MS) {
      // Open by the next run, so a sale starting in between is not left out until the next full pass.
      const inWindow = await this.sales.redisBackedOpenBetween(
        new Date(now - ENDED_WITHIN_MS),
        new Date(now + this.config.lifecycle.recoveryIntervalMs),
      );
      for (const saleId of inWindow) saleIds.add(saleId);
      this.lastFullPassAt = now;
    }
    const sales = await Promise.all([...saleIds].map((saleId) => this.layouts.of(saleId)));
    const backlogs = await Promise.all(sales.map((sale) => this.handoff.backlog(sale)));
    const salesWithBacklog = sales.filter((_, i) => (backlogs[i] ?? 0) > 0);
    const withBacklog = salesWithBacklog.map((sale) => sale.id);
    if (withBacklog.length === 0) return 0;
    // Deduplicated per sale: a sale whose job waits or runs gets no second one.
    await this.ordersQueue.wakeWriters(salesWithBacklog);
    // A sale with a backlog stays in the index until it is written.
    await this.activity.touch(withBacklog, now);
    this.logger.debug(`Nudged the writers of ${withBacklog.length} sale(s) with unwritten hand-offs`);
    return withBacklog.length;
  }
}
