import type { OrderStatus } from './order';

/** `201` of `POST /api/sales/:id/tokens`: single use, bound to the caller and the sale. */
export interface SubmitToken {
  token: string;
  expiresAt: string;
}

/** `POST /api/sales/:id/purchase`; `quantity` is 1 when absent, at most `SALE_LIMITS.maxQuantity`. */
export interface PurchaseRequest {
  token: string;
  quantity?: number;
}

/**
 * `202 QUEUED` for redis-lua sales; `201 PENDING_PAYMENT` for the strategies that write MySQL at once. A
 * replay of a token that bought answers its order as it is: any status (`PAID`, `CANCELLED`…).
 */
export interface PurchaseAccepted {
  orderNo: string;
  status: OrderStatus;
}

/** What the payment provider posts to `POST /api/payments/callback` (HMAC-signed). */
export interface PaymentCallback {
  outTradeNo: string;
  transactionId: string;
  amountCents: number;
  status: 'SUCCESS';
}
