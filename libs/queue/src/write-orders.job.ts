import type { SaleLayout } from '@flash-sale/domain';
import type { JobsOptions } from 'bullmq';

/**
 * `write-orders`: write what is waiting in one sale's hand-off streams (one per bucket). The job carries
 * no order, only the sale: the reservations themselves are in the streams (reserve-9.lua appends them
 * atomically). One job per sale, not per bucket: each add costs the queue's Redis master a script,
 * and a hot sale is nudged hundreds of times a second.
 */
export const WRITE_ORDERS_JOB = 'write-orders';

/** Every job name of the `orders` queue. */
export type OrdersJobName = typeof WRITE_ORDERS_JOB;

export interface WriteOrdersJobData {
  saleId: string;
  /** The sale's bucket count; absent for a sale with one bucket. */
  buckets?: number;
}

/** The sale whose streams a job writes. */
export function saleOfJob(data: WriteOrdersJobData): SaleLayout {
  return { id: data.saleId, buckets: data.buckets ?? 1 };
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
 * One waiting job per sale at most: adds while one waits are dropped (it will read the streams), and an
 * add while one runs is kept as its successor (BullMQ's `keepLastIfActive`), which closes the race of
 * an entry appended after the running job's last read.
 */
export function writeOrdersJob(
  sale: SaleLayout,
  attempts: number,
): { name: OrdersJobName; data: WriteOrdersJobData; opts: JobsOptions } {
  return {
    name: WRITE_ORDERS_JOB,
    data: sale.buckets > 1 ? { saleId: sale.id, buckets: sale.buckets } : { saleId: sale.id },
    opts: {
      deduplication: { id: `write-orders:${sale.id}`, keepLastIfActive: true },
      attempts,
      backoff: { type: 'exponential', delay: 200 },
      // Completed jobs show their batch sizes on the queue board: keep a short tail.
      removeOnComplete: { count: 1000 },
      removeOnFail: { count: 1000 },
    },
  };
}
