/**
 * A reservation as stored in a sale's `reservations` hash: "userId|quantity|slot|reservedAtMs|epoch".
 * The epoch is the Redis incarnation whose lease the units came from; empty (here 0) for an order MySQL
 * sold itself and a reload copied in.
 */
export interface ReservationRecord {
  orderNo: string;
  userId: string;
  quantity: number;
  slot: number;
  reservedAt: Date;
  epoch: number;
}

export function parseReservationRecord(orderNo: string, value: string): ReservationRecord {
  const record = reservationRecordAt(orderNo, value.split('|'), 0);
  if (!record) throw new Error(`Malformed reservation record for ${orderNo}: ${value}`);
  return record;
}

/**
 * The record whose five fields start at `fields[from]`: a hand-off entry carries them after its order
 * number, and is split once for both. Undefined when the user or the time is missing.
 */
export function reservationRecordAt(
  orderNo: string,
  fields: readonly string[],
  from: number,
): ReservationRecord | undefined {
  const userId = fields[from];
  const reservedAtMs = fields[from + 3];
  if (userId === undefined || reservedAtMs === undefined) return undefined;
  return {
    orderNo,
    userId,
    quantity: Number(fields[from + 1]),
    slot: Number(fields[from + 2]),
    reservedAt: new Date(Number(reservedAtMs)),
    epoch: Number(fields[from + 4] || 0),
  };
}
