import { HOLDING_STATUSES, type OrderStatus } from './order';

/** An order row as the books need it. */
export interface BookedOrder {
  orderNo: string;
  status: OrderStatus;
  quantity: number;
  /** The Redis incarnation whose lease it came from; null when MySQL sold it itself. */
  leaseEpoch: number | null;
}

/** A Redis reservation as the books need it. */
export interface BookedReservation {
  orderNo: string;
  quantity: number;
  /** The incarnation it was reserved in; 0 for an order MySQL sold that a reload copied in. */
  epoch: number;
}

export interface SaleBooksInput {
  rows: readonly BookedOrder[];
  reservations: readonly BookedReservation[];
  /** Order numbers whose buyer hold the release script has freed (their rows are written). */
  returnedInRedis: ReadonlySet<string> | ReadonlyMap<string, unknown>;
  /** Redis's sellable balance. */
  redisBalance: number;
  /** The incarnation Redis sells on (MySQL's `redis_epoch`). */
  currentEpoch: number;
  /** Units leased to the current incarnation and not yet an order: MySQL `leased − in_doubt`. */
  liveLeased: number;
  /** Units of leases MySQL made for the current incarnation that Redis has not confirmed yet. */
  pendingLeaseUnits: number;
  /**
   * Units of the current incarnation a bucket took out of its balance to give back to MySQL, which MySQL
   * has not added to `available` yet (see unappliedGiveBackUnits).
   */
  unappliedGiveBackUnits?: number;
}

/** A give-back Redis recorded: units a bucket handed back to MySQL, and their incarnation. */
export interface RecordedGiveBack {
  units: number;
  epoch: number;
}

/** Units of the current incarnation's give-backs that MySQL has not applied (no ledger row for their key yet). */
export function unappliedGiveBackUnits(
  givebacks: ReadonlyMap<string, RecordedGiveBack>,
  appliedReturnKeys: ReadonlySet<string>,
  currentEpoch: number,
): number {
  let units = 0;
  for (const [returnKey, giveBack] of givebacks) {
    if (giveBack.epoch === currentEpoch && !appliedReturnKeys.has(returnKey)) units += giveBack.units;
  }
  return units;
}

export interface SaleBooks {
  held: number;
  /** Reservations with no order row yet (queued, or lost: telling which needs the queue). */
  unwritten: BookedReservation[];
  /** Units of unwritten reservations of the current incarnation. */
  unwrittenUnits: number;
  /** Rows of the current incarnation with no reservation of their own: a duplicate or a phantom. */
  ordersWithoutOwnReservation: number;
  /**
   * Redis's side of the live leases − MySQL's: (balance + unwritten units + pending grants + unapplied
   * give-backs) − (leased − in doubt). 0 when they agree; positive when Redis could sell units it was never leased
   * (phantom stock); negative when leased units are stranded that Redis will not sell.
   */
  drift: number;
}

/** Reads the two ledgers — MySQL rows and leases, Redis reservations and balance — against each other. Pure. */
export function compareBooks(input: SaleBooksInput): SaleBooks {
  const rowNumbers = new Set(input.rows.map((row) => row.orderNo));
  const reservationNumbers = new Set(input.reservations.map((reservation) => reservation.orderNo));
  let held = 0;
  for (const row of input.rows) if (HOLDING_STATUSES.includes(row.status)) held += row.quantity;
  const unwritten = input.reservations.filter((reservation) => !rowNumbers.has(reservation.orderNo));
  const unwrittenUnits = unwritten
    .filter(
      (reservation) => reservation.epoch === input.currentEpoch && !input.returnedInRedis.has(reservation.orderNo),
    )
    .reduce((units, reservation) => units + reservation.quantity, 0);
  return {
    held,
    unwritten,
    unwrittenUnits,
    ordersWithoutOwnReservation: input.rows.filter(
      (row) => row.leaseEpoch === input.currentEpoch && !reservationNumbers.has(row.orderNo),
    ).length,
    drift:
      input.redisBalance +
      unwrittenUnits +
      input.pendingLeaseUnits +
      (input.unappliedGiveBackUnits ?? 0) -
      input.liveLeased,
  };
}
