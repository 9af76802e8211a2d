import type { OrderStatus, OrdersByStatus, SaleStatus, SaleStrategy } from '@flash-sale/domain';

/** The HTTP contract's shapes (../../shared/API.md), as the storefront reads them. */

export interface GuestSession {
  token: string;
  user: { id: string; name: string };
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
  queue: { waiting: number; active: number; delayed: number; failed: number };
  purchases: number;
  sampledAt: string;
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
