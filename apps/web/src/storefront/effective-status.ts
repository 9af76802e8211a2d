import type { Sale, SaleStatus } from '@flash-sale/contract';

/**
 * The sale's status now, by the server's clock: the status in a fetched Sale was true when it was
 * fetched, but an upcoming sale opens — and a live one closes — between two fetches. Stock is the
 * server's to say; only the time window is advanced here.
 */
export function effectiveStatus(sale: Sale, serverNow: number): SaleStatus {
  if (serverNow >= Date.parse(sale.endsAt)) return 'ended';
  if (sale.status === 'upcoming' && serverNow >= Date.parse(sale.startsAt)) {
    return sale.remaining > 0 ? 'live' : 'sold_out';
  }
  return sale.status;
}
