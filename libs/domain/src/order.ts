import type { OrderStatus } from '@flash-sale/contract';

export { ORDER_STATUSES, type OrderStatus } from '@flash-sale/contract';

/** Statuses whose units are taken from stock. `held` in the audit is the sum of their quantities. */
export const HOLDING_STATUSES: readonly OrderStatus[] = ['PENDING_PAYMENT', 'PAID'];

/** Statuses whose unit went back to stock (or never left it, for FAILED). */
export const RETURNED_STATUSES: readonly OrderStatus[] = ['CANCELLED', 'EXPIRED', 'FAILED'];

/**
 * The order state machine (docs/architecture.md "After the purchase"), as a table. Every status change in MySQL is a
 * compare-and-set on (status, version) guarded by this table, so an illegal move never reaches the row.
 */
const TRANSITIONS: Readonly<Record<OrderStatus, readonly OrderStatus[]>> = {
  QUEUED: ['PENDING_PAYMENT', 'FAILED'],
  PENDING_PAYMENT: ['PAID', 'CANCELLED', 'EXPIRED'],
  PAID: [],
  CANCELLED: [],
  EXPIRED: [],
  FAILED: [],
};

export function canTransition(from: OrderStatus, to: OrderStatus): boolean {
  return TRANSITIONS[from].includes(to);
}

/**
 * An order MySQL holds, as loading a sale into Redis needs it: a load makes sure Redis counts a holding
 * one (PENDING_PAYMENT or PAID) against its buyer, and knows every order's submit token as spent — a
 * cancelled, expired or failed one too, so that no copy of Redis, however old, sells that token again.
 */
export interface LoadedOrder {
  orderNo: string;
  userId: string;
  quantity: number;
  slot: number;
  reservedAt: Date;
  /** The submit token that made it, when MySQL knows it: a replay of it then finds the order in Redis. */
  submitToken: string | null;
  /** False once the order gave its units back (CANCELLED, EXPIRED, FAILED): it no longer counts against its buyer. */
  holding: boolean;
}

/**
 * A reservation on its way to MySQL: everything the reservation script decided, nothing the worker
 * must guess. It travels in the sale's hand-off stream.
 */
export interface HandedOffOrder {
  orderNo: string;
  saleId: string;
  userId: string;
  quantity: number;
  /** The buyer's purchase slot chosen by the script; MySQL enforces its uniqueness. */
  slot: number;
  /** When Redis reserved the units (Redis's clock). */
  reservedAt: Date;
  /** The Redis incarnation whose lease the units came from (docs/architecture.md "Who owns the stock"). */
  epoch: number;
  /** The submit token that bought it, so a replay finds the order across an outage; null when unknown. */
  submitToken: string | null;
  /** The sale's bucket it was reserved in (docs/architecture.md "Hot sales: buckets"); 0 when the sale has one. */
  bucket?: number;
}
