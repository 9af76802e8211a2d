import { ORDER_STATUSES, type OrdersByStatus } from '@flash-sale/contract';

export type { OrdersByStatus } from '@flash-sale/contract';

export function emptyOrdersByStatus(): OrdersByStatus {
  return Object.fromEntries(ORDER_STATUSES.map((status) => [status, 0])) as OrdersByStatus;
}

/** What the audit reads from MySQL and Redis, independently of anything the purchase path counts. */
export interface AuditFacts {
  stock: number;
  /** Units held by PENDING_PAYMENT + PAID order rows. */
  held: number;
  /** MySQL's own books: `sales.available` (neither leased nor held). */
  mysqlAvailable: number;
  /** MySQL's own books: `sales.leased` (handed to Redis, not yet an order), in doubt included. */
  mysqlLeased: number;
  /** The part of `mysqlLeased` granted to lost Redis incarnations, waiting for reconciliation. */
  inDoubt: number;
  /** Redis's side of the live leases against MySQL's (see compareBooks); 0 when they agree. */
  drift: number;
  /** Units a single user holds above the per-user limit, summed over users. */
  unitsAboveUserLimit: number;
  /** Order rows that share a reservation or have none (redis-lua sales). */
  ordersWithoutOwnReservation: number;
  /** Reservations with neither an order row nor a queued job. */
  lostReservations: number;
  /** The peak MySQL recorded before units were given back (`sales.oversold_peak`). */
  recordedOversoldPeak: number;
}

export interface AuditVerdict {
  oversold: number;
  /** The most units the sale ever held beyond its stock: the recorded peak, or the oversell now if higher. */
  oversoldPeak: number;
  duplicateOrders: number;
  lostReservations: number;
  /** Redis's balance + unwritten reservations (+ grants in flight) == its live leases. */
  redisBooksBalance: boolean;
  /** MySQL available + leased + held == stock. */
  mysqlBooksBalance: boolean;
  ok: boolean;
}

/** Units held by orders beyond the stock: never above 0 but for the strategies that oversell on purpose. */
export function oversoldUnits(books: { held: number; stock: number }): number {
  return Math.max(0, books.held - books.stock);
}

/** The most units a sale ever held beyond its stock: its recorded peak, or what it holds beyond it now. */
export function oversoldPeakUnits(books: { held: number; stock: number; oversoldPeak: number }): number {
  return Math.max(oversoldUnits(books), books.oversoldPeak);
}

/**
 * The invariants of docs/architecture.md "What must never happen". Units in doubt (a Redis incarnation lost its
 * state and reconciliation has not settled it yet) are not a fault, but the books are not closed
 * either: the verdict is ok only once they are settled.
 */
export function auditVerdict(facts: AuditFacts): AuditVerdict {
  const oversold = oversoldUnits(facts);
  // An oversell that happened stays one after its orders expire or are cancelled: the verdict keeps it.
  const oversoldPeak = oversoldPeakUnits({ ...facts, oversoldPeak: facts.recordedOversoldPeak });
  const duplicateOrders = facts.unitsAboveUserLimit + facts.ordersWithoutOwnReservation;
  const redisBooksBalance = facts.drift === 0;
  const mysqlBooksBalance = facts.mysqlAvailable + facts.mysqlLeased + facts.held === facts.stock;
  return {
    oversold,
    oversoldPeak,
    duplicateOrders,
    lostReservations: facts.lostReservations,
    redisBooksBalance,
    mysqlBooksBalance,
    ok:
      oversoldPeak === 0 &&
      duplicateOrders === 0 &&
      facts.lostReservations === 0 &&
      facts.inDoubt === 0 &&
      redisBooksBalance &&
      mysqlBooksBalance,
  };
}
