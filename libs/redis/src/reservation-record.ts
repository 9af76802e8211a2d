/** A reservation as stored in a sale's `reservations` hash: "userId|quantity|slot|reservedAtMs". */
export interface ReservationRecord {
  orderNo: string;
  userId: string;
  quantity: number;
  slot: number;
  reservedAt: Date;
}

export function parseReservationRecord(orderNo: string, value: string): ReservationRecord {
  const [userId, quantity, slot, reservedAtMs] = value.split('|');
  if (userId === undefined || reservedAtMs === undefined) {
    throw new Error(`Malformed reservation record for ${orderNo}: ${value}`);
  }
  return {
    orderNo,
    userId,
    quantity: Number(quantity),
    slot: Number(slot),
    reservedAt: new Date(Number(reservedAtMs)),
  };
}
