import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { type AppConfig, InjectAppConfig } from '@flash-sale/config';
import { ErrorCode } from '@flash-sale/domain';
import { HandoffStream, type SaleBucket } from '@flash-sale/redis';
import { Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { RetryLaterError } from './retry-later.error';

/** How often the two pressures are measured. A purchase reads the last verdict: no work per request. */
const SAMPLE_INTERVAL_MS = 250;

export type ShedReason = 'backlog' | 'event-loop';

/**
 * Admission control for purchases. When the hand-off backlog (reservations waiting in the sales' streams)
 * or this process's event-loop delay passes its bound, accepting more purchases only makes every buyer
 * wait longer and risks timeouts after the unit was taken; answering `503 UNAVAILABLE` with
 * `retry-after` at once costs nothing and tells the client exactly when to come back with the same
 * token. Both pressures are sampled in the background, so the check on the hot path is a field read.
 */
@Injectable()
export class LoadShedder implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(LoadShedder.name);
  private readonly bounds: AppConfig['protection']['shedding'];
  private readonly eventLoopDelay: IntervalHistogram;
  private timer: NodeJS.Timeout | undefined;
  private sampling = false;
  /** Why purchases are being shed right now, or undefined when they are admitted. */
  private verdict: ShedReason | undefined;
  /**
   * The backlog of each hand-off stream (a sale's bucket) with unwritten hand-offs, as the reservation
   * script last reported it (it returns its stream's length for free); the sampler refreshes those not
   * yet back to zero. By `saleId/bucket`.
   */
  private readonly backlogs = new Map<string, { bucket: SaleBucket; backlog: number }>();

  constructor(
    private readonly handoff: HandoffStream,
    @InjectAppConfig() config: AppConfig,
  ) {
    this.bounds = config.protection.shedding;
    this.eventLoopDelay = monitorEventLoopDelay({ resolution: 10 });
  }

  onModuleInit(): void {
    this.eventLoopDelay.enable();
    this.timer = setInterval(() => void this.sample(), SAMPLE_INTERVAL_MS);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
    this.eventLoopDelay.disable();
  }

  /** A reservation's report of its bucket's hand-off backlog. */
  noteBacklog(bucket: SaleBucket, backlog: number): void {
    const key = `${bucket.saleId}/${bucket.index}`;
    if (backlog > 0 || this.backlogs.has(key)) this.backlogs.set(key, { bucket, backlog });
  }

  /** The reason to shed this purchase, if any. */
  reason(): ShedReason | undefined {
    return this.verdict;
  }

  refusal(reason: ShedReason): RetryLaterError {
    const message =
      reason === 'backlog' ? 'Too many orders are waiting to be written' : 'The server is saturated right now';
    return new RetryLaterError(
      ErrorCode.Unavailable,
      `${message}; nothing was done: retry in ${this.bounds.retryAfterSeconds} s with the same token`,
      this.bounds.retryAfterSeconds,
    );
  }

  private async sample(): Promise<void> {
    if (this.sampling) return;
    this.sampling = true;
    try {
      const delayMs = this.eventLoopDelay.percentile(99) / 1e6;
      this.eventLoopDelay.reset();
      const { maxBacklog, maxEventLoopDelayMs } = this.bounds;
      let verdict: ShedReason | undefined;
      if (maxEventLoopDelayMs > 0 && delayMs > maxEventLoopDelayMs) verdict = 'event-loop';
      else if (maxBacklog > 0 && (await this.totalBacklog()) > maxBacklog) verdict = 'backlog';
      if (verdict !== this.verdict) {
        this.logger.warn(verdict ? `Shedding purchases (${verdict})` : 'Admitting purchases again');
      }
      this.verdict = verdict;
    } catch {
      // Redis unreachable: the backlog is unknown; the purchase path has its own answer for that.
      this.verdict = undefined;
    } finally {
      this.sampling = false;
    }
  }

  /** Refreshes the streams known to have a backlog (the ones still writing: usually few) and sums them. */
  private async totalBacklog(): Promise<number> {
    const streams = [...this.backlogs.entries()];
    const current = await Promise.all(streams.map(([, { bucket }]) => this.handoff.bucketBacklog(bucket)));
    let total = 0;
    streams.forEach(([key, { bucket }], i) => {
      const backlog = current[i] ?? 0;
      if (backlog === 0) this.backlogs.delete(key);
      else this.backlogs.set(key, { bucket, backlog });
      total += backlog;
    });
    return total;
  }
}
