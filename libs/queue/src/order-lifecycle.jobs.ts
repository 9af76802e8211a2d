import type { JobsOptions } from 'bullmq';

export const EXPIRE_ORDER_JOB = 'expire-order';

/** Payload of `expire-order`, a delayed job per order due at its payment deadline. */
export interface ExpireOrderJobData {
  orderNo: string;
  saleId: string;
  /** ISO-8601 payment deadline; the job does nothing before it. */
  expiresAt: string;
}

/** One expiry per order: scheduling it again (a retried create-order job) is a no-op. */
export function expireOrderJobId(orderNo: string): string {
  return `expire-${orderNo}`;
}

export function expireOrderJobOptions(orderNo: string, expiresAt: Date, now = Date.now()): JobsOptions {
  return {
    jobId: expireOrderJobId(orderNo),
    delay: Math.max(0, expiresAt.getTime() - now),
    attempts: 10,
    backoff: { type: 'exponential', delay: 500 },
    removeOnComplete: { count: 1000 },
    removeOnFail: { count: 10_000 },
  };
}

/**
 * Scheduled maintenance (BullMQ job schedulers: stored in Redis, so each run happens once per
 * cluster however many workers there are).
 */
export const RECOVER_RESERVATIONS_JOB = 'recover-reservations';
export const RECONCILE_STOCK_JOB = 'reconcile-stock';

export type LifecycleJobName = typeof EXPIRE_ORDER_JOB | typeof RECOVER_RESERVATIONS_JOB | typeof RECONCILE_STOCK_JOB;
