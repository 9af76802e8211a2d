import type { WaitingRoomRequest, WaitingRoomSettings } from './waiting-room';

/**
 * Where a sale keeps the units it sells from. What creating, editing, preloading and auditing a sale do
 * follows from it, never from a strategy's name:
 * - `redis-leases`: MySQL leases units to Redis, which sells them. Only such a sale may spread over
 *   buckets, is loaded into Redis (preload) and has its window copied there.
 * - `sale-row`: the sale's row in MySQL.
 * - `segment-rows`: segment rows in MySQL, each buyer taking from their own; the sale's row keeps none.
 */
export type SaleStockHome = 'redis-leases' | 'sale-row' | 'segment-rows';

/** What the rest of the product knows of a strategy: how the admin console names it, and its traits. */
export interface SaleStrategyTraits {
  label: string;
  description: string;
  stock: SaleStockHome;
  /** The strategy a sale gets when none is asked for: the one the product recommends. */
  recommended?: true;
  /** Only for a strategy that exists to show an oversell: what makes it oversell, shown when it is chosen. */
  unsafeWarning?: string;
  /** It sells under a lock whose first holder a demonstration may pause (`pauseLockHolder`). */
  lockHolder?: true;
}

/**
 * Every way a sale can sell (docs/architecture.md "Strategies"), in the order the admin console offers
 * them: the one table of strategies. Every list of them below (the unsafe, the lock strategies, the
 * demonstration's order, the Redis-backed, the default) is derived from it. Adding a strategy: its entry
 * here, then its folder in apps/api/src/purchase/strategies/ and its line in that folder's registry
 * (the API does not compile until it has one).
 */
const STRATEGY_TABLE = {
  'redis-lua': {
    label: 'redis-lua (recommended)',
    description:
      'Reserves each unit atomically in Redis with a Lua script; orders reach MySQL through a queue. Fastest, never oversells.',
    stock: 'redis-leases',
    recommended: true,
  },
  'db-optimistic': {
    label: 'db-optimistic',
    description: 'MySQL only: each purchase writes on condition of the row’s version and retries on a conflict.',
    stock: 'sale-row',
  },
  'db-segmented': {
    label: 'db-segmented',
    description:
      'MySQL only: the stock is split into segment rows; each buyer takes from their own segment on condition of its version, so far fewer conflicts than one row.',
    stock: 'segment-rows',
  },
  'db-pessimistic': {
    label: 'db-pessimistic',
    description:
      'MySQL only: each purchase locks the sale row (SELECT … FOR UPDATE). Correct, but buyers wait in line.',
    stock: 'sale-row',
  },
  'db-batched': {
    label: 'db-batched',
    description:
      'MySQL only: the purchases arriving together are sold in one transaction on the locked sale row (group commit), each buyer answered on their own.',
    stock: 'sale-row',
  },
  'redis-lock': {
    label: 'redis-lock',
    description:
      'A per-sale lock in Redis around read, check and write in MySQL; a fencing token lets MySQL refuse a holder whose lock ran out.',
    stock: 'sale-row',
    lockHolder: true,
  },
  'redis-lock-unfenced': {
    label: 'redis-lock-unfenced (UNSAFE)',
    description: 'The same Redis lock, trusted without a fencing token.',
    stock: 'sale-row',
    lockHolder: true,
    unsafeWarning:
      'A lock holder paused longer than the lock lives (a GC pause, a slow network) writes its stale stock over the sales made meanwhile, so units are sold twice. It exists only to demonstrate that problem — never use it for a real sale.',
  },
  'naive-unsafe': {
    label: 'naive-unsafe (UNSAFE)',
    description: 'MySQL only: reads the stock and writes it back with no lock or condition.',
    stock: 'sale-row',
    unsafeWarning:
      'Concurrent buyers read the same stock and all succeed, so it sells more units than it has. It exists only to demonstrate that problem — never use it for a real sale.',
  },
} as const satisfies Record<string, SaleStrategyTraits>;

export type SaleStrategy = keyof typeof STRATEGY_TABLE;

/** Every strategy, in the table's order. */
export const SALE_STRATEGIES = Object.keys(STRATEGY_TABLE) as [SaleStrategy, ...SaleStrategy[]];

/** Each strategy's traits, by name. */
export const SALE_STRATEGY_TRAITS: Readonly<Record<SaleStrategy, SaleStrategyTraits>> = STRATEGY_TABLE;

const strategiesWhere = (trait: (traits: SaleStrategyTraits) => unknown): readonly SaleStrategy[] =>
  SALE_STRATEGIES.filter((strategy) => trait(SALE_STRATEGY_TRAITS[strategy]));

/** Where each strategy's sales keep their units. */
export const SALE_STRATEGY_STOCK = Object.fromEntries(
  SALE_STRATEGIES.map((strategy) => [strategy, STRATEGY_TABLE[strategy].stock]),
) as { readonly [Name in SaleStrategy]: (typeof STRATEGY_TABLE)[Name]['stock'] };

/** The strategies whose sales Redis sells from leases (and the lease bookkeeping looks after). */
export const REDIS_BACKED_STRATEGIES: readonly SaleStrategy[] = strategiesWhere(
  (traits) => traits.stock === 'redis-leases',
);

export function sellsFromRedis(strategy: SaleStrategy): boolean {
  return SALE_STRATEGY_TRAITS[strategy].stock === 'redis-leases';
}

/** The most buckets a sale of this strategy may spread over: only Redis-backed stock is spread. */
export function maxBucketsOf(strategy: SaleStrategy): number {
  return sellsFromRedis(strategy) ? SALE_LIMITS.maxBuckets : 1;
}

/** Strategies that exist to show an oversell, and say so wherever they are named. */
export const UNSAFE_STRATEGIES: readonly SaleStrategy[] = strategiesWhere((traits) => traits.unsafeWarning);

/** The strategies a demonstration's `pauseLockHolder` applies to. */
export const LOCK_STRATEGIES: readonly SaleStrategy[] = strategiesWhere((traits) => traits.lockHolder);

/** The recommended strategy: a new sale's default. */
export const RECOMMENDED_STRATEGY = SALE_STRATEGIES.find((strategy) => SALE_STRATEGY_TRAITS[strategy].recommended)!;

/**
 * The demonstration's strategies when it is not told which: every one, the unsafe first (their oversell
 * is what the audience waits for) and the recommended last.
 */
export const DEMO_DEFAULT_STRATEGIES: readonly SaleStrategy[] = [
  ...UNSAFE_STRATEGIES,
  ...strategiesWhere((traits) => !traits.unsafeWarning && !traits.recommended),
  RECOMMENDED_STRATEGY,
];

export const SALE_STATUSES = ['upcoming', 'live', 'sold_out', 'ended'] as const;
export type SaleStatus = (typeof SALE_STATUSES)[number];

/**
 * Why a sale exists. `shop` sales are the storefront's; the others are test data made by the k6 load
 * tests, `npm run bench`, the demo and an API process's startup warm-up (`warm-up`: a sale it buys in
 * through the front door and then removes, with every row and key it made): the storefront never lists
 * them, the admin list does (filterable).
 */
export const SALE_PURPOSES = ['shop', 'load-test', 'bench', 'demo', 'warm-up'] as const;
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
  strategy: RECOMMENDED_STRATEGY,
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
  /** Test data (`load-test`, `bench`, `demo`, `warm-up`) stays out of the storefront; default `shop`. */
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
