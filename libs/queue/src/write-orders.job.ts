import type { JobsOptions } from 'bullmq';

/**
 * `write-orders`: write what is waiting in one sale's hand-off stream. The job carries no order, only
 * the sale: the reservations themselves are in the stream (reserve-9.lua appends them atomically).
 */
export const WRITE_ORDERS_JOB = 'write-orders';

export interface WriteOrdersJobData {
  saleId: string;
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
 * One waiting job per sale at most: adds while one waits are dropped (it will read the stream), and an
 * add while one runs is kept as its successor (BullMQ's `keepLastIfActive`), which closes the race of
 * an entry appended after the running job's last read.
 */
export function writeOrdersJob(
  saleId: string,
  attempts: number,
): { name: string; data: WriteOrdersJobData; opts: JobsOptions } {
  return {
    name: WRITE_ORDERS_JOB,
    data: { saleId },
    opts: {
      deduplication: { id: `write-orders:${saleId}`, keepLastIfActive: true },
      attempts,
      backoff: { type: 'exponential', delay: 200 },
      // Completed jobs show their batch sizes on the queue board: keep a short tail.
      removeOnComplete: { count: 1000 },
      removeOnFail: { count: 1000 },
    },
  };
}
