import type { SalePurpose, SaleStatus, SaleStrategy, WaitingRoomSettings } from '@flash-sale/contract';

// The contract's vocabulary and bounds (libs/contract), re-exported for the code that imports the domain.
export {
  SALE_LIMITS,
  SALE_PURPOSES,
  SALE_STRATEGIES,
  type SalePurpose,
  type SaleStatus,
  type SaleStrategy,
  type WaitingRoomSettings,
} from '@flash-sale/contract';

/**
 * A sale as its Redis layout needs it: its id and the number of buckets its stock is spread over
 * (docs/architecture.md "Hot sales: buckets"). The count is fixed when the sale is created.
 */
export interface SaleLayout {
  readonly id: string;
  readonly buckets: number;
}

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

/**
 * A sale as the purchase path reads it: what it sells, when, to whom and how. Only fields fixed at
 * creation (or that only end the sale earlier), never stock: a cached copy can never sell a unit.
 */
export interface SaleTerms extends SaleWindow {
  id: string;
  priceCents: number;
  perUserLimit: number;
  strategy: SaleStrategy;
  /** Redis buckets its leased stock is spread over (1 for every strategy but redis-lua's hot sales). */
  buckets: number;
  paymentTimeoutSeconds: number;
}

/** A sale as the catalog shows it: its terms, how it presents itself, and the units it was created with. */
export interface SaleDefinition extends SaleTerms {
  name: string;
  description: string | null;
  imageUrl: string | null;
  stock: number;
  purpose: SalePurpose;
  /** Its waiting room, or null; an admin may change it while the sale runs (the catalog is told). */
  waitingRoom: WaitingRoomSettings | null;
}

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
