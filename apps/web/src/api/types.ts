import type { OrderStatus, OrdersByStatus, SaleStatus, SaleStrategy } from '@flash-sale/domain';

/** The HTTP contract's shapes (../../shared/API.md), as the storefront reads them. */

/** A signed-in shopper: a guest (its account ends with this browser's token) or a registered account. */
export interface GuestSession {
  token: string;
  user: { id: string; name: string; registered?: boolean };
}

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
}

export interface SubmitToken {
  token: string;
  expiresAt: string;
}

/** `202 QUEUED` for redis-lua sales; `201 PENDING_PAYMENT` for the synchronous MySQL strategies. */
export interface PurchaseAccepted {
  orderNo: string;
  status: OrderStatus;
}

export interface Order {
  orderNo: string;
  saleId: string;
  userId: string;
  quantity: number;
  amountCents: number;
  status: OrderStatus;
  createdAt: string;
  expiresAt?: string | null;
  paidAt?: string | null;
  /** The payment's reference, on single-order reads once paying started. */
  paymentReference?: string;
}

/** An order in the admin's list of a sale's orders: with the buyer's account name, if registered. */
export interface AdminOrder extends Order {
  userName: string | null;
}

export interface AdminOrderPage {
  items: AdminOrder[];
  next?: string;
}

export interface UpdateSaleInput {
  name?: string;
  description?: string;
  imageUrl?: string;
  endsAt?: string;
}

export type DemoPhase = 'waiting' | 'preparing' | 'buying' | 'settling' | 'done' | 'failed';

export interface DemoStrategyResult {
  strategy: SaleStrategy;
  phase: DemoPhase;
  saleId?: string;
  sent: number;
  accepted: number;
  refused: number;
  errors: number;
  oversold: number | null;
  requestsPerSecond: number | null;
  p50Ms: number | null;
  p95Ms: number | null;
  durationMs: number | null;
  audit: {
    ok: boolean;
    stock: number;
    held: number;
    oversold: number;
    duplicateOrders: number;
    lostReservations: number;
  } | null;
  error?: string;
}

export interface DemoRun {
  id: string;
  status: 'running' | 'finished' | 'failed';
  stock: number;
  buyers: number;
  createdAt: string;
  finishedAt: string | null;
  results: DemoStrategyResult[];
  error?: string;
}

export interface Audit {
  saleId: string;
  stock: number;
  remaining: number;
  held: number;
  ordersByStatus: OrdersByStatus;
  oversold: number;
  duplicateOrders: number;
  lostReservations: number;
  ok: boolean;
  drift?: number;
  checkedAt?: string;
  /** Stock leased from MySQL to Redis (DESIGN.md "Who owns the stock"); absent for MySQL-only sales' older APIs. */
  leases?: LeaseLedger;
}

export interface LeaseLedger {
  /** The Redis incarnation the sale sells on. */
  epoch: number;
  granted: number;
  converted: number;
  inDoubt: number;
  returned: number;
  outstanding: number;
  pending: number;
}

export interface SaleDashboard {
  sale: Sale;
  audit: Audit;
  /** The sale's hand-off: reservations not written to MySQL yet, and its writer jobs that gave up. */
  handoff: { unwritten: number; beingWritten: number; failedJobs: number };
  purchases: number;
  sampledAt: string;
  /** Orders per second over the last two minutes (older API versions send none). */
  history?: { at: string; purchases: number }[];
}

export interface CreateSaleInput {
  name: string;
  priceCents: number;
  stock: number;
  perUserLimit: number;
  startsAt: string;
  endsAt: string;
  strategy: SaleStrategy;
  paymentTimeoutSeconds: number;
  description?: string;
  imageUrl?: string;
}
