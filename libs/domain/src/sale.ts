import type { SaleStatus } from '@flash-sale/contract';

// The contract's vocabulary and bounds (libs/contract), re-exported for the code that imports the domain.
export {
  SALE_LIMITS,
  SALE_PURPOSES,
  SALE_STRATEGIES,
  type SalePurpose,
  type SaleStatus,
  type SaleStrategy,
} from '@flash-sale/contract';

export interface SaleWindow {
  startsAt: Date;
  endsAt: Date;
}

/** The status a buyer sees: time decides first, then whether anything is left to sell. */
export function saleStatus(window: SaleWindow, remaining: number, now: Date): SaleStatus {
  if (now < window.startsAt) return 'upcoming';
  if (now >= window.endsAt) return 'ended';
  return remaining > 0 ? 'live' : 'sold_out';
}
