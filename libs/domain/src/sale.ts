import type { SalePurpose, SaleStatus, SaleStrategy, WaitingRoomSettings } from '@flash-sale/contract';

// The contract's vocabulary and bounds (libs/contract), re-exported for the code that imports the domain.
export {
  maxBucketsOf,
  REDIS_BACKED_STRATEGIES,
  SALE_LIMITS,
  SALE_PURPOSES,
  SALE_STRATEGIES,
  SALE_STRATEGY_STOCK,
  sellsFromRedis,
  type SalePurpose,
  type SaleStockHome,
  type SaleStatus,
  type SaleStrategy,
  type WaitingRoomSettings,
} from '@flash-sale/contract';

/**
 * A sale as the domain knows it: the one shape between MySQL's row (libs/db's SaleEntity, mapped by
 * `saleDefinitionOf`) and the HTTP view (the contract's `Sale`, mapped by the API's `saleView`). Every
 * field is declared here once; the narrower shapes below pick what one part needs of it. Only fields
 * fixed at creation or changed by an admin's edit, never stock: a cached copy can never sell a unit.
 * Adding a field: docs/architecture.md "Adding a sale field".
 */
export interface SaleDefinition {
  id: string;
  name: string;
  description: string | null;
  imageUrl: string | null;
  priceCents: number;
  /** The units it was created with; where they are now is the stock ledger's (SaleStockCounts). */
  stock: number;
  perUserLimit: number;
  startsAt: Date;
  endsAt: Date;
  strategy: SaleStrategy;
  paymentTimeoutSeconds: number;
  purpose: SalePurpose;
  /**
   * Redis buckets (hash slots) its leased stock is spread over (docs/architecture.md "Hot sales:
   * buckets"): 1 unless its strategy sells from Redis; fixed at creation, since each buyer's records
   * live in their bucket.
   */
  buckets: number;
  /** Its waiting room, or null; an admin may change it while the sale runs (the catalog is told). */
  waitingRoom: WaitingRoomSettings | null;
}

/** A sale about to be created: everything but the id MySQL gives it. */
export type NewSaleDefinition = Omit<SaleDefinition, 'id'>;

/** What an admin may edit on a sale: how it presents itself and its end, never its stock or terms. */
export type SaleEdit = Partial<Pick<SaleDefinition, 'name' | 'description' | 'imageUrl' | 'endsAt'>>;

/** A sale as its Redis layout needs it: its id and the number of buckets its stock is spread over. */
export type SaleLayout = Pick<SaleDefinition, 'id' | 'buckets'>;

export type SaleWindow = Pick<SaleDefinition, 'startsAt' | 'endsAt'>;

/** The status a buyer sees: time decides first, then whether anything is left to sell. */
export function saleStatus(window: SaleWindow, remaining: number, now: Date): SaleStatus {
  if (now < window.startsAt) return 'upcoming';
  if (now >= window.endsAt) return 'ended';
  return remaining > 0 ? 'live' : 'sold_out';
}

/** A sale as the purchase path reads it: what it sells, when, to whom and how. */
export type SaleTerms = Pick<
  SaleDefinition,
  'id' | 'startsAt' | 'endsAt' | 'priceCents' | 'perUserLimit' | 'strategy' | 'buckets' | 'paymentTimeoutSeconds'
>;

/** A sale id as the API accepts it: a positive BIGINT in decimal. Anything else names no sale. */
const SALE_ID_PATTERN = /^[1-9][0-9]{0,18}$/;

export function isSaleId(value: string): boolean {
  return SALE_ID_PATTERN.test(value);
}

/**
 * The largest id MySQL's BIGINT holds, which no sale is ever given (ids count up from 1): the sale the
 * API's and the worker's startup warm-ups buy in and write for, knowing nothing real answers to it.
 */
export const WARM_UP_SALE_ID = '9223372036854775807';
