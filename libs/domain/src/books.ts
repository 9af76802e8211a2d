import { HOLDING_STATUSES, type OrderStatus, RETURNED_STATUSES } from './order';

/** An order row as the books need it. */
export interface BookedOrder {
  orderNo: string;
  status: OrderStatus;
  quantity: number;
}

/** A Redis reservation as the books need it. */
export interface BookedReservation {
  orderNo: string;
  quantity: number;
}

export interface SaleBooksInput {
  rows: readonly BookedOrder[];
  reservations: readonly BookedReservation[];
  /** Order numbers whose units the release script has given back to Redis. */
  returnedInRedis: ReadonlySet<string> | ReadonlyMap<string, unknown>;
  redisRemaining: number;
  mysqlAvailable: number;
}

export interface SaleBooks {
  held: number;
  /** Reservations with no order row yet (queued, or lost: telling which needs the queue). */
  unwritten: BookedReservation[];
  /** Units of unwritten reservations that still hold stock in Redis. */
  unwrittenUnits: number;
  /** Units MySQL took back (cancelled, expired, failed) that Redis has not been given yet. */
  unitsBeingReturned: number;
  /** Rows with no reservation of their own (for a Redis-backed sale, a duplicate or a phantom). */
  ordersWithoutOwnReservation: number;
  /**
   * Redis remaining − (MySQL available − unwritten units − units being returned): 0 when Redis and
   * MySQL agree; positive when Redis would sell units MySQL no longer has (MySQL then refuses them);
   * negative when units are stuck that neither side will sell.
   */
  drift: number;
}

/** Reads the two ledgers — MySQL rows and Redis reservations — against each other. Pure. */
export function compareBooks(input: SaleBooksInput): SaleBooks {
  const rowNumbers = new Set(input.rows.map((row) => row.orderNo));
  const reservationNumbers = new Set(input.reservations.map((reservation) => reservation.orderNo));
  let held = 0;
  let unitsBeingReturned = 0;
  for (const row of input.rows) {
    if (HOLDING_STATUSES.includes(row.status)) held += row.quantity;
    if (RETURNED_STATUSES.includes(row.status) && !input.returnedInRedis.has(row.orderNo)) {
      unitsBeingReturned += row.quantity;
    }
  }
  const unwritten = input.reservations.filter((reservation) => !rowNumbers.has(reservation.orderNo));
  const unwrittenUnits = unwritten
    .filter((reservation) => !input.returnedInRedis.has(reservation.orderNo))
    .reduce((units, reservation) => units + reservation.quantity, 0);
  return {
    held,
    unwritten,
    unwrittenUnits,
    unitsBeingReturned,
    ordersWithoutOwnReservation: input.rows.filter((row) => !reservationNumbers.has(row.orderNo)).length,
    drift: input.redisRemaining - (input.mysqlAvailable - unwrittenUnits - unitsBeingReturned),
  };
}
