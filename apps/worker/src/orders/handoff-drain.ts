import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { type AppConfig, InjectAppConfig } from '@flash-sale/config';
import type { HandedOffOrder, SaleLayout } from '@flash-sale/domain';
import type { WriteOrdersResult } from '@flash-sale/queue';
import { StockLeaseRepository } from '@flash-sale/db';
import { bucketsOf, type HandoffEntry, HandoffStream, SaleActivity, type SaleBucket } from '@flash-sale/redis';
import { Injectable, Logger } from '@nestjs/common';
import { WorkerMetrics } from '../ops/worker-metrics';
import { OrderWriter } from './order-writer';

/** A job hands the sale back to the queue after about this long, so the board shows progress. */
const MAX_DRAIN_MS = 5_000;
/** How many batch sizes a job's result lists (the last ones). */
const REPORTED_BATCHES = 50;
/**
 * Once the stream is empty, a job waits this long for more before it ends: under a steady flow of
 * purchases one job keeps writing (for up to MAX_DRAIN_MS) instead of one job per handful of orders,
 * each costing BullMQ's bookkeeping in Redis.
 */
const LINGER_MS = 5;
/** A sale is marked active (for the background jobs) at most this often by one process. */
const ACTIVITY_MARK_EVERY_MS = 1_000;

/** Counts one batch written, of `batchSize` orders, in the drain's result. */
type CountBatch = (batchSize: number) => void;

/** A stream's name in logs and in this process's per-stream state: the sale id, with `/bucket` when it has several. */
function streamName(bucket: SaleBucket): string {
  return bucket.count === 1 ? bucket.saleId : `${bucket.saleId}/${bucket.index}`;
}

/**
 * Writes one sale's hand-off stream into MySQL (docs/architecture.md "The purchase path", step 4): claims entries through the consumer
 * group in batches, writes each batch in one transaction (group commit), then acknowledges and deletes
 * its entries. An entry is acknowledged only once its order row is committed, so a worker that dies
 * mid-batch leaves its entries pending: after `HANDOFF_CLAIM_IDLE_MS` of idleness another worker takes
 * them over, and MySQL's unique order number turns a second write into "already written".
 */
@Injectable()
export class HandoffDrain {
  private readonly logger = new Logger(HandoffDrain.name);
  /** This process's consumer name in every sale's group. */
  private readonly consumer = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  /** Streams where an attempt of this process failed with entries in hand: those are read back first. */
  private readonly unacknowledgedHere = new Set<string>();
  /** When this process last looked for a dead worker's entries, per stream (they must idle first). */
  private readonly lastClaimAt = new Map<string, number>();
  private readonly lastMarkedAt = new Map<string, number>();

  constructor(
    private readonly stream: HandoffStream,
    private readonly writer: OrderWriter,
    private readonly leases: StockLeaseRepository,
    private readonly activity: SaleActivity,
    private readonly metrics: WorkerMetrics,
    @InjectAppConfig() private readonly config: AppConfig,
  ) {}

  /**
   * Writes what is waiting in the sale's streams (one per bucket), until they are empty (or about
   * MAX_DRAIN_MS passed).
   */
  async drain(sale: SaleLayout): Promise<WriteOrdersResult> {
    const saleId = sale.id;
    const buckets = bucketsOf(sale);
    const result: WriteOrdersResult = { written: 0, batches: [], batchCount: 0, reclaimed: 0, handedOn: false };
    const countBatch: CountBatch = (size) => {
      result.written += size;
      result.batchCount += 1;
      result.batches.push(size);
      if (result.batches.length > REPORTED_BATCHES) result.batches.shift();
    };
    await this.markActive(saleId);
    let current: SaleBucket | undefined;
    try {
      for (current of buckets) {
        await this.writeOwnUnacknowledged(current, countBatch);
        result.reclaimed += await this.writeAbandoned(current, countBatch);
      }
      current = undefined;
      const drained =
        buckets.length === 1
          ? await this.writeNew(buckets[0]!, countBatch)
          : await this.writeNewInTurn(buckets, countBatch, (bucket) => (current = bucket));
      result.handedOn = !drained;
    } catch (error) {
      // What this process was given stays pending for it: its next attempt reads it back first.
      for (const bucket of current ? [current] : buckets) this.unacknowledgedHere.add(streamName(bucket));
      throw error;
    }
    if (result.written > 0) await this.markActive(saleId);
    return result;
  }

  /** What this consumer was given by an attempt that failed; one batch at a time (re-reading needs the ack). */
  private async writeOwnUnacknowledged(bucket: SaleBucket, countBatch: CountBatch): Promise<void> {
    const stream = streamName(bucket);
    if (!this.unacknowledgedHere.has(stream)) return;
    let own = await this.readOwnPending(bucket);
    while (own.length > 0) {
      await this.write(bucket, own);
      countBatch(own.length);
      own = await this.readOwnPending(bucket, own[own.length - 1]!.id);
    }
    this.unacknowledgedHere.delete(stream);
  }

  /**
   * What other consumers were given and never acknowledged for HANDOFF_CLAIM_IDLE_MS (their worker died or
   * stopped mid-batch). Looked for now and then, not on every job: such entries must idle first anyway.
   */
  private async writeAbandoned(bucket: SaleBucket, countBatch: CountBatch): Promise<number> {
    const now = Date.now();
    const stream = streamName(bucket);
    if (now - (this.lastClaimAt.get(stream) ?? 0) < this.config.worker.claimIdleMs / 2) return 0;
    this.lastClaimAt.set(stream, now);
    let reclaimed = 0;
    let cursor = '0-0';
    do {
      const claimed = await this.stream.claimIdle(
        bucket,
        this.consumer,
        this.config.worker.claimIdleMs,
        this.config.worker.batchSize,
        cursor,
      );
      cursor = claimed.cursor;
      if (claimed.entries.length === 0) continue;
      this.logger.warn(`Sale ${stream}: took over ${claimed.entries.length} hand-off(s) a worker left unwritten`);
      await this.write(bucket, claimed.entries);
      countBatch(claimed.entries.length);
      reclaimed += claimed.entries.length;
    } while (cursor !== '0-0');
    return reclaimed;
  }

  /**
   * New entries, reading the next batch while the current one is written. Returns false when it
   * stopped at MAX_DRAIN_MS with entries possibly left (the caller then queues the sale's next job).
   */
  private async writeNew(bucket: SaleBucket, countBatch: CountBatch): Promise<boolean> {
    const deadline = Date.now() + MAX_DRAIN_MS;
    let entries = await this.readNew(bucket);
    while (entries.length > 0) {
      const readAt = this.nextReadAt(entries.length < this.config.worker.batchSize, Date.now());
      const following = Date.now() < deadline ? this.readNewAt(bucket, readAt) : undefined;
      // The read ahead is awaited only once the write is done: a failure before then (Redis failing over)
      // must already count as handled, or Node ends the process on an unhandled rejection.
      following?.catch(() => undefined);
      try {
        await this.write(bucket, entries);
      } catch (error) {
        await following?.catch(() => undefined);
        throw error;
      }
      countBatch(entries.length);
      if (!following) return false;
      entries = await following;
      if (entries.length === 0 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, LINGER_MS));
        entries = await this.readNew(bucket);
      }
    }
    return true;
  }

  /**
   * New entries of a sale with several buckets: a batch from each stream in turn, so no bucket waits for
   * another to run dry. Returns false when it stopped at MAX_DRAIN_MS with entries possibly left.
   */
  private async writeNewInTurn(
    buckets: readonly SaleBucket[],
    countBatch: CountBatch,
    writing: (bucket: SaleBucket) => void,
  ): Promise<boolean> {
    const deadline = Date.now() + MAX_DRAIN_MS;
    let lingered = false;
    let readAt = 0;
    while (Date.now() < deadline) {
      let written = 0;
      let anyFull = false;
      const roundStartedAt = Date.now();
      for (const bucket of buckets) {
        writing(bucket);
        const entries = await this.readNewAt(bucket, readAt);
        readAt = 0;
        if (entries.length === 0) continue;
        await this.write(bucket, entries);
        countBatch(entries.length);
        written += entries.length;
        anyFull ||= entries.length === this.config.worker.batchSize;
      }
      readAt = written > 0 ? this.nextReadAt(!anyFull, roundStartedAt) : 0;
      if (written > 0) lingered = false;
      else if (lingered) return true;
      else {
        lingered = true;
        await new Promise((resolve) => setTimeout(resolve, LINGER_MS));
      }
    }
    return false;
  }

  /**
   * When to read after a batch (or a round over the buckets) read at `readAt`: short of full, the writer
   * keeps up with the purchases, so it waits ORDER_BATCH_GATHER_MS from that read to gather more of them
   * (group commit: every transaction costs about the same, whatever its size); otherwise at once.
   */
  private nextReadAt(short: boolean, readAt: number): number {
    return short ? readAt + this.config.worker.gatherMs : 0;
  }

  /** `readNew` at the time `at` (ms since the epoch), or now if that has passed. */
  private async readNewAt(bucket: SaleBucket, at: number): Promise<HandoffEntry[]> {
    const wait = at - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    return this.readNew(bucket);
  }

  /** This consumer's next batch of entries no consumer was given yet. */
  private readNew(bucket: SaleBucket): Promise<HandoffEntry[]> {
    return this.stream.readNew(bucket, this.consumer, this.config.worker.batchSize);
  }

  /** A batch of what this consumer was given and has not acknowledged, after the entry `after`. */
  private readOwnPending(bucket: SaleBucket, after?: string): Promise<HandoffEntry[]> {
    return this.stream.readOwnPending(bucket, this.consumer, this.config.worker.batchSize, after);
  }

  private async write(bucket: SaleBucket, entries: readonly HandoffEntry[]): Promise<void> {
    const orders: HandedOffOrder[] = [];
    for (const entry of entries) {
      if (entry.order) orders.push(entry.order);
      else if (entry.giveBack) {
        // Units the bucket gave back (give-back-4.lua): usually applied by the API already, once per key.
        const outcome = await this.leases.applyGiveBack(bucket.saleId, { ...entry.giveBack, bucket: bucket.index });
        // More than MySQL can account to the bucket: Redis holds an older copy of the sale. The check of
        // its incarnation (reconciliation, the API) finds that copy stale and replaces it.
        if (outcome === 'refused') {
          this.logger.warn(
            `Sale ${streamName(bucket)}: a give-back MySQL cannot account for was refused (stale Redis)`,
          );
        }
      } else this.logger.error(`Sale ${streamName(bucket)}: hand-off entry ${entry.id} is unreadable; dropped`);
    }
    if (orders.length > 0) {
      const outcomes = await this.writer.writeBatch(bucket.saleId, orders);
      this.metrics.observeCreated(orders.filter((_, i) => outcomes[i] === 'created'));
    }
    await this.stream.acknowledge(
      bucket,
      entries.map((entry) => entry.id),
    );
  }

  private async markActive(saleId: string): Promise<void> {
    const now = Date.now();
    if (now - (this.lastMarkedAt.get(saleId) ?? 0) < ACTIVITY_MARK_EVERY_MS) return;
    this.lastMarkedAt.set(saleId, now);
    await this.activity.touch([saleId], now);
  }
}
