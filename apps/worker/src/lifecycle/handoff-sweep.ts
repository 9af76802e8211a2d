import type { AppConfig } from '@flash-sale/config';
import { writeOrdersJob } from '@flash-sale/queue';
import { SaleActivity, SaleRedisRepository } from '@flash-sale/redis';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Queue } from 'bullmq';
import type { DataSource } from 'typeorm';
import { LIFECYCLE_CONFIG, ORDERS_QUEUE, WORKER_CONFIG } from '../worker.tokens';

/** Sales marked active this recently are checked on every run. */
const ACTIVE_WINDOW_MS = 15 * 60_000;
/** Every sale in its window (or ended within the hour) is checked this often, marked or not. */
const FULL_PASS_EVERY_MS = 5 * 60_000;

/**
 * The safety net of the hand-off. The reservation and its hand-off entry are one atomic step, and the
 * API nudges the sale's `write-orders` job after every reservation, so nothing waits for this sweep in
 * the common case. It wakes the writer of any sale whose stream still holds entries: one whose job
 * failed all its attempts (MySQL down for long), one whose nudge never reached the queue (an API
 * that died right after the script), one whose worker died mid-batch (the job then takes its entries
 * over once they are idle for RECOVERY_GRACE_MS). It looks at the sales marked active lately, and at
 * every sale in its window only every few minutes: its cost follows activity, not the number of sales.
 */
@Injectable()
export class HandoffSweep {
  private readonly logger = new Logger(HandoffSweep.name);
  private lastFullPassAt = 0;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly saleRedis: SaleRedisRepository,
    private readonly activity: SaleActivity,
    @Inject(ORDERS_QUEUE) private readonly ordersQueue: Queue,
    @Inject(LIFECYCLE_CONFIG) private readonly config: AppConfig['lifecycle'],
    @Inject(WORKER_CONFIG) private readonly workerConfig: AppConfig['worker'],
  ) {}

  /** Returns how many sales with unwritten hand-offs it nudged. */
  async run(now = Date.now()): Promise<number> {
    const saleIds = new Set(await this.activity.activeSince(now - ACTIVE_WINDOW_MS));
    if (now - this.lastFullPassAt >= FULL_PASS_EVERY_MS) {
      for (const saleId of await this.salesInWindow(now)) saleIds.add(saleId);
      this.lastFullPassAt = now;
    }
    const withBacklog: string[] = [];
    const backlogs = await Promise.all([...saleIds].map((saleId) => this.saleRedis.handoffBacklog(saleId)));
    [...saleIds].forEach((saleId, i) => {
      if ((backlogs[i] ?? 0) > 0) withBacklog.push(saleId);
    });
    if (withBacklog.length === 0) return 0;
    // Deduplicated per sale: a sale whose job waits or runs gets no second one.
    await this.ordersQueue.addBulk(withBacklog.map((saleId) => writeOrdersJob(saleId, this.workerConfig.jobAttempts)));
    // A sale with a backlog stays in the index until it is written.
    await this.activity.touch(withBacklog, now);
    this.logger.debug(`Nudged the writers of ${withBacklog.length} sale(s) with unwritten hand-offs`);
    return withBacklog.length;
  }

  private async salesInWindow(now: number): Promise<string[]> {
    const rows = (await this.dataSource.query(
      `SELECT id FROM sales WHERE strategy = 'redis-lua' AND starts_at <= ? AND ends_at > ?`,
      [new Date(now + this.config.recoveryIntervalMs), new Date(now - 3_600_000)],
    )) as { id: string | number }[];
    return rows.map((row) => String(row.id));
  }
}
