import type { OrdersByStatus } from './order';
import type { Sale } from './sale';

/**
 * `GET /api/admin/sales/:id/audit`. `held` = units in PENDING_PAYMENT + PAID orders; `oversold` =
 * max(0, held − stock); `ok` when the three counters are 0 and the books balance.
 */
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
  /** Redis against MySQL over the live leases; 0 when they agree. */
  drift?: number;
  checkedAt?: string;
  /** Stock leased from MySQL to Redis (docs/architecture.md "Who owns the stock"). */
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

/** The backlog between a reservation and its MySQL row. */
export interface HandoffDepth {
  unwritten: number;
  beingWritten: number;
  /** The sale's writer jobs that gave up. */
  failedJobs: number;
}

/** `GET /api/admin/sales/:id/dashboard`: one sample of the admin console's live view. */
export interface SaleDashboard {
  sale: Sale;
  audit: Audit;
  handoff: HandoffDepth;
  /** Successful purchases so far, whatever became of their orders. */
  purchases: number;
  sampledAt: string;
  /** Orders per second over the last minutes, oldest first. */
  history?: { at: string; purchases: number }[];
}
