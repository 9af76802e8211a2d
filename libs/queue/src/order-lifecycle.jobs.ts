/**
 * Jobs of the `order-lifecycle` queue. All of them are scheduled maintenance (BullMQ job schedulers:
 * stored in Redis, so each run happens once per cluster however many workers there are).
 */

/**
 * Expires unpaid orders whose payment deadline has passed: one indexed MySQL query per run finds
 * them, and each one is moved by compare-and-set. It is the only expiry mechanism, so writing an
 * order costs no Redis work for its expiry.
 */
export const EXPIRE_OVERDUE_ORDERS_JOB = 'expire-overdue-orders';
/** The hand-off sweep: wakes the writer of every sale whose stream still holds unwritten entries. */
export const RECOVER_RESERVATIONS_JOB = 'recover-reservations';
export const RECONCILE_STOCK_JOB = 'reconcile-stock';
/**
 * The slow safety pass over the sales reconciliation leaves alone because nothing happened to them:
 * each live one's Redis incarnation is verified, each ended one gets its retention.
 */
export const CHECK_IDLE_SALES_JOB = 'check-idle-sales';

export type LifecycleJobName =
  | typeof EXPIRE_OVERDUE_ORDERS_JOB
  | typeof RECOVER_RESERVATIONS_JOB
  | typeof RECONCILE_STOCK_JOB
  | typeof CHECK_IDLE_SALES_JOB;
