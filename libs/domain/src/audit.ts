import { ORDER_STATUSES, type OrderStatus } from './order';

export type OrdersByStatus = Record<OrderStatus, number>;

export function emptyOrdersByStatus(): OrdersByStatus {
  return Object.fromEntries(ORDER_STATUSES.map((status) => [status, 0])) as OrdersByStatus;
}

/** What the audit reads from MySQL and Redis, independently of anything the purchase path counts. */
export interface AuditFacts {
  stock: number;
  /** Units Redis can still sell (for MySQL-only strategies: MySQL `available`). */
  remaining: number;
  /** Units held by PENDING_PAYMENT + PAID order rows. */
  held: number;
  /** Units reserved in Redis whose order row is not written yet but whose job is still queued. */
  queuedUnits: number;
  /** MySQL's own books: `sales.available`. */
  mysqlAvailable: number;
  /** Units of returned orders that MySQL has taken back but Redis has not yet (transient). */
  unitsBeingReturned: number;
  /** Units a single user holds above the per-user limit, summed over users. */
  unitsAboveUserLimit: number;
  /** Order rows that share a reservation or have none (redis-lua sales). */
  ordersWithoutOwnReservation: number;
  /** Reservations with neither an order row nor a queued job. */
  lostReservations: number;
}

export interface AuditVerdict {
  oversold: number;
  duplicateOrders: number;
  lostReservations: number;
  /** Redis remaining + queued + held + being returned == stock. */
  redisBooksBalance: boolean;
  /** MySQL available + held == stock. */
  mysqlBooksBalance: boolean;
  ok: boolean;
}

export function auditVerdict(facts: AuditFacts): AuditVerdict {
  const oversold = Math.max(0, facts.held - facts.stock);
  const duplicateOrders = facts.unitsAboveUserLimit + facts.ordersWithoutOwnReservation;
  const redisBooksBalance = facts.remaining + facts.queuedUnits + facts.held + facts.unitsBeingReturned === facts.stock;
  const mysqlBooksBalance = facts.mysqlAvailable + facts.held === facts.stock;
  return {
    oversold,
    duplicateOrders,
    lostReservations: facts.lostReservations,
    redisBooksBalance,
    mysqlBooksBalance,
    ok:
      oversold === 0 && duplicateOrders === 0 && facts.lostReservations === 0 && redisBooksBalance && mysqlBooksBalance,
  };
}
