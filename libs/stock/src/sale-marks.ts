import type { SaleActivity } from '@flash-sale/redis';

/**
 * Whoever changes a sale marks it in the active-sales index, so that reconciliation visits it
 * (SaleActivity). Best effort: a mark lost while Redis is unreachable is made up for by the full
 * reconciliation that follows the worker's reconnect, and a lost incarnation by the periodic check of
 * idle sales. No index (tests that drive leases or orders by hand): nothing to mark.
 */
export async function markSaleChanged(activity: SaleActivity | undefined, saleId: string): Promise<void> {
  await activity?.touch([saleId]).catch(() => undefined);
}
