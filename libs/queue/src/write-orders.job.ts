import type { SaleBucket } from '@flash-sale/redis';
import type { JobsOptions } from 'bullmq';

/**
 * `write-orders`: write what is waiting in one hand-off stream (one per bucket of a sale). The job
 * carries no order, only the stream's sale and bucket: the reservations themselves are in the stream
 * (reserve-9.lua appends them atomically).
 */
export const WRITE_ORDERS_JOB = 'write-orders';

export interface WriteOrdersJobData {
  saleId: string;
  /** The bucket and the sale's bucket count; absent for a sale with one bucket. */
  bucket?: number;
  buckets?: number;
}

/** The bucket whose stream a job writes. */
export function bucketOfJob(data: WriteOrdersJobData): SaleBucket {
  return { saleId: data.saleId, index: data.bucket ?? 0, count: data.buckets ?? 1 };
}

/** What a `write-orders` job returns: shown on the queue board. */
export interface WriteOrdersResult {
  /** Orders written (created, already there, or refused and written FAILED). */
  written: number;
  /** The batch sizes, in order (the last ones when there were many). */
  batches: number[];
  batchCount: number;
  /** Entries of a dead worker (or of a failed attempt) taken over and written. */
  reclaimed: number;
  /** The job stopped after its time slice with entries possibly left, and queued its successor. */
  handedOn: boolean;
}

/**
 * One waiting job per stream at most: adds while one waits are dropped (it will read the stream), and an
 * add while one runs is kept as its successor (BullMQ's `keepLastIfActive`), which closes the race of
 * an entry appended after the running job's last read.
 */
export function writeOrdersJob(
  bucket: SaleBucket,
  attempts: number,
): { name: string; data: WriteOrdersJobData; opts: JobsOptions } {
  const several = bucket.count > 1;
  return {
    name: WRITE_ORDERS_JOB,
    data: several ? { saleId: bucket.saleId, bucket: bucket.index, buckets: bucket.count } : { saleId: bucket.saleId },
    opts: {
      deduplication: {
        id: several ? `write-orders:${bucket.saleId}:${bucket.index}` : `write-orders:${bucket.saleId}`,
        keepLastIfActive: true,
      },
      attempts,
      backoff: { type: 'exponential', delay: 200 },
      // Completed jobs show their batch sizes on the queue board: keep a short tail.
      removeOnComplete: { count: 1000 },
      removeOnFail: { count: 1000 },
    },
  };
}
