import type { WaitingRoomRequest, WaitingRoomSettings } from './waiting-room';

export const SALE_STRATEGIES = [
  'redis-lua',
  'db-optimistic',
  'db-segmented',
  'db-pessimistic',
  'redis-lock',
  'redis-lock-unfenced',
  'naive-unsafe',
] as const;
export type SaleStrategy = (typeof SALE_STRATEGIES)[number];

/** Strategies that exist to show an oversell, and say so wherever they are named. */
export const UNSAFE_STRATEGIES: readonly SaleStrategy[] = ['naive-unsafe', 'redis-lock-unfenced'];

export const SALE_STATUSES = ['upcoming', 'live', 'sold_out', 'ended'] as const;
export type SaleStatus = (typeof SALE_STATUSES)[number];

/**
 * Why a sale exists. `shop` sales are the storefront's; the others are test data made by the k6 load
 * tests, `npm run bench` and the demo: the storefront never lists them, the admin list does (filterable).
 */
export const SALE_PURPOSES = ['shop', 'load-test', 'bench', 'demo'] as const;
export type SalePurpose = (typeof SALE_PURPOSES)[number];

/** Bounds of a sale's fields and of one purchase: they keep a sale's Redis state small and a purchase sane. */
export const SALE_LIMITS = {
  maxNameLength: 120,
  maxPriceCents: 100_000_000,
  maxStock: 10_000_000,
  /** Per-user purchase slots are a bitmask in Redis (see reserve-9.lua), so the limit stays well under 31. */
  maxPerUserLimit: 20,
  maxQuantity: 20,
  minPaymentTimeoutSeconds: 10,
  maxPaymentTimeoutSeconds: 86_400,
  maxDescriptionLength: 2000,
  maxImageUrlLength: 500,
  /** Redis buckets (cluster hash slots) a redis-lua sale's stock may be spread over. */
  maxBuckets: 16,
} as const;

/** What `POST /api/admin/sales` assumes for an optional field left out. */
export const SALE_DEFAULTS = {
  perUserLimit: 1,
  strategy: 'redis-lua',
  paymentTimeoutSeconds: 600,
  purpose: 'shop',
} as const satisfies {
  perUserLimit: number;
  strategy: SaleStrategy;
  paymentTimeoutSeconds: number;
  purpose: SalePurpose;
};

/** `Sale`: the answer of every sale route. */
export interface Sale {
  id: string;
  name: string;
  description: string | null;
  imageUrl: string | null;
  priceCents: number;
  stock: number;
  remaining: number;
  perUserLimit: number;
  startsAt: string;
  endsAt: string;
  strategy: SaleStrategy;
  paymentTimeoutSeconds: number;
  status: SaleStatus;
  purpose: SalePurpose;
  /** Redis buckets the sale's stock is spread over (1 for every strategy but redis-lua). */
  buckets: number;
  /** The sale's waiting room (docs/api.md "The waiting room"), or null: buyers go straight to the buy step. */
  waitingRoom: WaitingRoomSettings | null;
}

/** `POST /api/admin/sales`; see SALE_DEFAULTS for what a missing field means (`startsAt`: now). */
export interface CreateSaleRequest {
  name: string;
  priceCents: number;
  stock: number;
  perUserLimit?: number;
  startsAt?: string;
  endsAt: string;
  strategy?: SaleStrategy;
  paymentTimeoutSeconds?: number;
  description?: string;
  imageUrl?: string;
  /** Test data (`load-test`, `bench`, `demo`) stays out of the storefront; default `shop`. */
  purpose?: SalePurpose;
  /**
   * redis-lua only: Redis buckets (cluster hash slots) the sale's leased stock is spread over, so a hot
   * sale is not bound by one Redis core; default 1 (or the server's SALE_BUCKETS_DEFAULT).
   */
  buckets?: number;
  /** Put buyers in a waiting room that admits them at a rate; absent or null = no room. */
  waitingRoom?: WaitingRoomRequest | null;
}

/**
 * `PATCH /api/admin/sales/:id`. Stock is not among the fields: units are a ledger operation. `endsAt`
 * now (or earlier) ends the sale early; `imageUrl: ""` removes the picture.
 */
export interface UpdateSaleRequest {
  name?: string;
  description?: string;
  imageUrl?: string;
  endsAt?: string;
  /** Adds, changes (live: the new rate applies at once) or, with null, removes the waiting room. */
  waitingRoom?: WaitingRoomRequest | null;
}
