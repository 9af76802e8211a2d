export const ORDER_STATUSES = ['QUEUED', 'PENDING_PAYMENT', 'PAID', 'CANCELLED', 'EXPIRED', 'FAILED'] as const;
/** `QUEUED`: reserved, its row not written yet. */
export type OrderStatus = (typeof ORDER_STATUSES)[number];

export type OrdersByStatus = Record<OrderStatus, number>;

/** `Order`: what the owner (or an admin) reads, pays and cancels. */
export interface Order {
  orderNo: string;
  saleId: string;
  userId: string;
  quantity: number;
  amountCents: number;
  status: OrderStatus;
  createdAt: string;
  expiresAt?: string;
  paidAt?: string;
  /** The payment's out-trade number (single-order reads only, once the owner started paying). */
  paymentReference?: string;
}

/**
 * An order in `GET /api/admin/sales/:id/orders`: with the buyer's name — the account's, or the name a
 * guest gave at sign-in (null if unknown) — and whether the buyer is a guest.
 */
export interface AdminOrder extends Order {
  userName: string | null;
  guest: boolean;
}

/** `GET /api/admin/sales/:id/orders?status=&q=&cursor=&limit=`: `next` is the cursor of the next page. */
export interface AdminOrderPage {
  items: AdminOrder[];
  next?: string;
}

/** Page sizes (`limit`) of the admin's order list. */
export const ADMIN_ORDER_PAGE = { defaultSize: 50, maxSize: 200 } as const;
