import type { OrdersByStatus } from './order';
import type { Sale } from './sale';

/**
 * `GET /api/admin/sales/:id/audit`. `held` = units in PENDING_PAYMENT + PAID orders; `oversold` =
 * max(0, held − stock) now; `oversoldPeak` = the largest `held − stock` the sale ever reached (units given
 * back later by expiry or cancel do not erase it); `ok` when the four counters are 0 and the books balance.
 */
export interface Audit {
  saleId: string;
  stock: number;
  remaining: number;
  held: number;
  ordersByStatus: OrdersByStatus;
  oversold: number;
  oversoldPeak: number;
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

/**
 * How far a sale's buyers got, each step read from what MySQL holds when the sample is taken. `joined` and
 * `admitted` count buyers and exist only for a sale with a waiting room; the other steps count orders.
 */
export interface SaleFunnel {
  /** Buyers who joined the waiting room (their place in line is recorded). */
  joined?: number;
  /**
   * Of those, buyers told they were admitted (their pass is recorded). A pass that expired unused sends
   * its buyer back to the line, and out of this count.
   */
  admitted?: number;
  /** Successful purchases, whatever became of their orders: the sample's `purchases`. */
  reserved: number;
  /** Orders written and kept by MySQL: PENDING_PAYMENT + PAID + CANCELLED + EXPIRED. */
  written: number;
  paid: number;
}

/**
 * Percentiles of the reservation script's latency (one Redis round trip, what a Redis-backed purchase
 * waits on), over the calls one API process timed in the last seconds, for every sale it sells. Estimated
 * from the buckets of its histogram, as Prometheus's `histogram_quantile` does.
 */
export interface ReservationLatency {
  /** Null when no call was timed in the window. */
  p50Ms: number | null;
  p95Ms: number | null;
  p99Ms: number | null;
  /** Script calls timed in the window, refusals and retries included. */
  calls: number;
  windowSeconds: number;
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
  funnel?: SaleFunnel;
  /**
   * A Redis-backed sale's only; absent too while the answering API process has no reading of its
   * histogram from a second or more earlier within the window to measure from (after a quiet spell).
   */
  reservationLatency?: ReservationLatency;
}
