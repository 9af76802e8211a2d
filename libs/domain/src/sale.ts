export const SALE_STRATEGIES = ['redis-lua', 'db-optimistic', 'db-pessimistic', 'naive-unsafe'] as const;
export type SaleStrategy = (typeof SALE_STRATEGIES)[number];

export type SaleStatus = 'upcoming' | 'live' | 'sold_out' | 'ended';

/** Upper bounds that keep a sale's Redis state small and a single purchase sane. */
export const SALE_LIMITS = {
  maxStock: 10_000_000,
  /** Per-user purchase slots are a bitmask in Redis (see reserve-6.lua), so the limit stays well under 31. */
  maxPerUserLimit: 20,
  maxQuantity: 20,
  maxPaymentTimeoutSeconds: 86_400,
} as const;

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
