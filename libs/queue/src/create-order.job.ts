import type { JobsOptions } from 'bullmq';

export const CREATE_ORDER_JOB = 'create-order';

/** Payload of `create-order`: everything the reservation script decided, nothing the worker must guess. */
export interface CreateOrderJobData {
  orderNo: string;
  saleId: string;
  userId: string;
  quantity: number;
  /** The buyer's purchase slot chosen by the script; MySQL enforces its uniqueness. */
  slot: number;
  /** ISO-8601, the moment Redis reserved the units. */
  reservedAt: string;
  /**
   * The Redis incarnation whose lease the units came from (DESIGN.md "Who owns the stock"); absent in
   * jobs of earlier versions, whose units were never leased.
   */
  epoch?: number;
  /** The submit token that bought it, so the Redis-down fallback can recognise a replay of it. */
  submitToken?: string;
}

/**
 * The job id is the order number, so BullMQ drops a second add of the same reservation
 * (a replayed purchase, a recovery pass) while the first is still known to the queue.
 */
export function createOrderJobId(orderNo: string): string {
  return orderNo;
}

export function createOrderJobOptions(attempts: number): JobsOptions {
  return {
    attempts,
    backoff: { type: 'exponential', delay: 200 },
    // Completed jobs are proven by their order row; keep only a short tail for the dashboard.
    removeOnComplete: { count: 1000 },
    // Failed jobs have a FAILED order row too; keep more of them for diagnosis.
    removeOnFail: { count: 10_000 },
  };
}
