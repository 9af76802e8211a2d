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
  const [userId, quantity, slot, reservedAtMs, epoch] = value.split('|');
  if (userId === undefined || reservedAtMs === undefined) {
    throw new Error(`Malformed reservation record for ${orderNo}: ${value}`);
  }
  return {
    orderNo,
    userId,
    quantity: Number(quantity),
    slot: Number(slot),
    reservedAt: new Date(Number(reservedAtMs)),
    epoch: Number(epoch || 0),
  };
}
