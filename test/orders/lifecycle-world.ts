import type { ErrorBody, Order } from '@flash-sale/contract';
import { SaleLayouts } from '@flash-sale/db';
import type { SaleLayout } from '@flash-sale/domain';
import { signPaymentBody } from '../../apps/api/src/payments/payment-signature';
import type { ApiResponse, PurchaseAnswer } from '../support/api-client';
import { countRows, waitFor } from '../support/fixtures';
import { type StackWorld, useStackWorld } from '../support/stack-world';

type Guest = { token: string; userId: string };
type OrderAnswer = ApiResponse<Order & ErrorBody>;

/** The order files' world (test/orders): the stack, direct Redis access, and the steps of an order's life. */
export interface LifecycleWorld extends StackWorld {
  /** A sale whose orders wait `paymentTimeoutSeconds` (shorter than the API allows) for payment. */
  createSale(stock: number, paymentTimeoutSeconds?: number): Promise<string>;
  /** The sale's Redis layout (its buckets: `TEST_SALE_BUCKETS` runs these files on several). */
  layout(saleId: string): Promise<SaleLayout>;
  buy(saleId: string, guest: Guest): Promise<ApiResponse<PurchaseAnswer>>;
  /** Buys one unit and waits until the worker has written the order. */
  buyWritten(saleId: string, guest: Guest): Promise<string>;
  pay(guest: Guest, orderNo: string): Promise<OrderAnswer>;
  cancel(guest: Guest, orderNo: string): Promise<OrderAnswer>;
  statusOf(orderNo: string): Promise<string | undefined>;
  /** Units MySQL has not handed to an order: unleased (`available`) plus leased to Redis and unsold. */
  available(saleId: string): Promise<number>;
  audit(saleId: string): Promise<ApiResponse<Record<string, unknown>>>;
  signedCallback(body: object, secret?: string): Promise<ApiResponse<{ outcome: string } & ErrorBody>>;
}

/** Payment, expiry, cancel, recovery and reconciliation run on the real services, timed by the tests. */
export function useLifecycleWorld(): LifecycleWorld {
  const w = useStackWorld({
    database: true,
    saleRedis: true,
    env: {
      // The simulated provider calls back late, three times, in random order.
      PAYMENT_CALLBACK_DELAY_MS: '20',
      PAYMENT_CALLBACK_JITTER_MS: '150',
      PAYMENT_CALLBACK_COPIES: '3',
      // Recovery and reconciliation are run by hand here, so their timing cannot make a test pass by
      // luck. The expiry sweep is the expiry mechanism itself: it runs on its schedule, a fast one.
      RECOVERY_INTERVAL_MS: '3600000',
      RECONCILE_INTERVAL_MS: '3600000',
      RECOVERY_GRACE_MS: '0',
      EXPIRY_SWEEP_INTERVAL_MS: '250',
    },
  }) as LifecycleWorld;

  w.createSale = async (stock, paymentTimeoutSeconds = 600) => {
    const sale = await w.client.createSale(w.admin, { name: 'Lifecycle sale', priceCents: 2500, stock });
    await w.db.query('UPDATE sales SET payment_timeout_seconds = ? WHERE id = ?', [paymentTimeoutSeconds, sale.id]);
    return sale.id;
  };
  w.layout = (saleId) => new SaleLayouts(w.db).of(saleId);
  // A 503 + retry-after ("nothing happened": units still moving between a sale's buckets, say) is resent
  // with the same token, as the storefront does.
  w.buy = async (saleId, guest) =>
    w.client.purchaseAsStorefront<PurchaseAnswer>(saleId, guest.token, await w.client.submitToken(saleId, guest.token));
  w.buyWritten = async (saleId, guest) => {
    const response = await w.buy(saleId, guest);
    expect(response.status).toBe(202);
    const { orderNo } = response.body;
    await waitFor(
      `order ${orderNo} written`,
      () =>
        countRows(w.db, `SELECT COUNT(*) AS n FROM orders WHERE order_no = ? AND status = 'PENDING_PAYMENT'`, [
          orderNo,
        ]),
      (n) => n === 1,
    );
    return orderNo;
  };
  // Paying is idempotent: a 503 + retry-after (nothing happened) is sent again, as a client would.
  w.pay = (guest, orderNo) => w.client.callRetryingAfter('POST', `/api/orders/${orderNo}/pay`, { token: guest.token });
  w.cancel = (guest, orderNo) => w.client.call('POST', `/api/orders/${orderNo}/cancel`, { token: guest.token });
  w.statusOf = async (orderNo) =>
    ((await w.db.query('SELECT status FROM orders WHERE order_no = ?', [orderNo])) as { status: string }[])[0]?.status;
  w.available = (saleId) => countRows(w.db, 'SELECT available + leased AS n FROM sales WHERE id = ?', [saleId]);
  w.audit = (saleId) => w.client.call('GET', `/api/admin/sales/${saleId}/audit`, { token: w.admin });
  w.signedCallback = (body, secret = w.testEnv.config.payment.webhookSecret) => {
    const raw = JSON.stringify(body);
    return w.client.call('POST', '/api/payments/callback', {
      rawBody: raw,
      headers: { 'x-payment-signature': signPaymentBody(raw, secret) },
    });
  };
  return w;
}
