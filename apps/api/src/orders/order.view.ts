import type { OrderEntity } from '@flash-sale/db';
import type { SaleTerms } from '@flash-sale/domain';
import type { Order } from '@flash-sale/contract';
import type { ReservationRecord } from '@flash-sale/redis';

/** `Order` of docs/api.md: the name the order services use for the contract's shape. */
export type OrderView = Order;

export function orderViewOfRow(order: OrderEntity): OrderView {
  const view: OrderView = {
    orderNo: order.orderNo,
    saleId: order.saleId,
    userId: order.userId,
    quantity: order.quantity,
    amountCents: order.amountCents,
    status: order.status,
    createdAt: order.reservedAt.toISOString(),
  };
  if (order.expiresAt) view.expiresAt = order.expiresAt.toISOString();
  if (order.paidAt) view.paidAt = order.paidAt.toISOString();
  return view;
}

/** A reservation whose order row is not written yet: the buyer sees it as QUEUED. */
export function orderViewOfReservation(reservation: ReservationRecord, sale: SaleTerms): OrderView {
  return {
    orderNo: reservation.orderNo,
    saleId: sale.id,
    userId: reservation.userId,
    quantity: reservation.quantity,
    amountCents: reservation.quantity * sale.priceCents,
    status: 'QUEUED',
    createdAt: reservation.reservedAt.toISOString(),
  };
}
