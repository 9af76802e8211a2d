import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { AppConfig } from '@flash-sale/config';
import type { HandedOffOrder } from '@flash-sale/domain';
import type { WriteOrdersResult } from '@flash-sale/queue';
import { type HandoffEntry, HandoffStream, SaleActivity } from '@flash-sale/redis';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { WorkerMetrics } from '../ops/worker-metrics';
import { LIFECYCLE_CONFIG, WORKER_CONFIG } from '../worker.tokens';
import { OrderWriter } from './order-writer';

/** A job hands the sale back to the queue after about this long, so the board shows progress. */
const MAX_DRAIN_MS = 5_000;
/** How many batch sizes a job's result lists (the last ones). */
const REPORTED_BATCHES = 50;

/**
 * Writes one sale's hand-off stream into MySQL (DESIGN.md step 4): claims entries through the consumer
 * group in batches, writes each batch in one transaction (group commit), then acknowledges and deletes
 * its entries. An entry is acknowledged only once its order row is committed, so a worker that dies
 * mid-batch leaves its entries pending: after `RECOVERY_GRACE_MS` of idleness another worker takes
 * them over, and MySQL's unique order number turns a second write into "already written".
 */
@Injectable()
export class HandoffDrain {
  private readonly logger = new Logger(HandoffDrain.name);
  /** This process's consumer name in every sale's group. */
  readonly consumer = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;

  constructor(
    private readonly stream: HandoffStream,
    private readonly writer: OrderWriter,
    private readonly activity: SaleActivity,
    private readonly metrics: WorkerMetrics,
    @Inject(WORKER_CONFIG) private readonly config: AppConfig['worker'],
    @Inject(LIFECYCLE_CONFIG) private readonly lifecycle: AppConfig['lifecycle'],
  ) {}

  /** Writes what is waiting in the sale's stream, until it is empty (or about MAX_DRAIN_MS passed). */
  async drain(saleId: string): Promise<WriteOrdersResult> {
    const result: WriteOrdersResult = { written: 0, batches: [], batchCount: 0, reclaimed: 0 };
    const record = (size: number) => {
      result.written += size;
      result.batchCount += 1;
      result.batches.push(size);
      if (result.batches.length > REPORTED_BATCHES) result.batches.shift();
    };
    await this.activity.touch([saleId]);

    // First what this consumer was given before and did not acknowledge (an attempt that failed),
    // then what dead consumers left: one batch at a time, since re-reading them depends on the ack.
    let ownCursor = '0';
    for (let own = await this.stream.readOwnPending(saleId, this.consumer, this.config.batchSize); own.length > 0;) {
      await this.write(saleId, own);
      record(own.length);
      ownCursor = own[own.length - 1]!.id;
      own = await this.stream.readOwnPending(saleId, this.consumer, this.config.batchSize, ownCursor);
    }
    let claimCursor = '0-0';
    do {
      const claimed = await this.stream.claimIdle(
        saleId,
        this.consumer,
        this.lifecycle.recoveryGraceMs,
        this.config.batchSize,
        claimCursor,
      );
      claimCursor = claimed.cursor;
      if (claimed.entries.length === 0) continue;
      this.logger.warn(`Sale ${saleId}: took over ${claimed.entries.length} hand-off(s) a worker left unwritten`);
      await this.write(saleId, claimed.entries);
      record(claimed.entries.length);
      result.reclaimed += claimed.entries.length;
    } while (claimCursor !== '0-0');

    // Then new entries, reading the next batch while the current one is written.
    const deadline = Date.now() + MAX_DRAIN_MS;
    let entries = await this.stream.readNew(saleId, this.consumer, this.config.batchSize);
    while (entries.length > 0) {
      const following =
        Date.now() < deadline ? this.stream.readNew(saleId, this.consumer, this.config.batchSize) : undefined;
      try {
        await this.write(saleId, entries);
      } catch (error) {
        // What was read ahead stays pending for this consumer: the retry of this job reads it first.
        await following?.catch(() => undefined);
        throw error;
      }
      record(entries.length);
      entries = following ? await following : [];
    }
    if (result.written > 0) await this.activity.touch([saleId]);
    return result;
  }

  private async write(saleId: string, entries: readonly HandoffEntry[]): Promise<void> {
    const orders: HandedOffOrder[] = [];
    for (const entry of entries) {
      if (entry.order) orders.push(entry.order);
      else this.logger.error(`Sale ${saleId}: hand-off entry ${entry.id} is unreadable; dropped`);
    }
    if (orders.length > 0) {
      const outcomes = await this.writer.writeBatch(saleId, orders);
      this.metrics.observeCommitted(orders, outcomes);
    }
    await this.stream.acknowledge(
      saleId,
      entries.map((entry) => entry.id),
    );
  }
}
