/**
 * Legacy: versions before the hand-off stream added one `create-order` job per purchase. Nothing adds
 * them any more; the worker still writes those an earlier version left in Redis, so an upgrade strands
 * no order.
 */
export const LEGACY_CREATE_ORDER_JOB = 'create-order';

/** Payload of a legacy `create-order` job. */
export interface LegacyCreateOrderJobData {
  orderNo: string;
  saleId: string;
  userId: string;
  quantity: number;
  slot: number;
  /** ISO-8601. */
  reservedAt: string;
  /** Absent in jobs of versions before leases. */
  epoch?: number;
  submitToken?: string;
}
