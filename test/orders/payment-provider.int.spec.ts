import { waitFor } from '../support/fixtures';
import { useStackWorld } from '../support/stack-world';

/** Sums the `flash_sale_payment_callbacks_total` series by `status/outcome`. */
function callbackCounts(metrics: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const [, status, outcome, value] of metrics.matchAll(
    /flash_sale_payment_callbacks_total\{status="(\d+)",outcome="([^"]*)"\} (\d+)/g,
  )) {
    counts[`${status} ${outcome}`] = Number(value);
  }
  return counts;
}

/**
 * The simulated provider's own callbacks — late, several copies, out of order, signed — reach the
 * running app's callback route and are acknowledged; the payment is applied exactly once.
 */
describe('payment provider callbacks, end to end (real API, worker, MariaDB, Redis)', () => {
  const COPIES = 3;
  const w = useStackWorld({
    database: true,
    env: {
      PAYMENT_CALLBACK_COPIES: String(COPIES),
      PAYMENT_CALLBACK_DELAY_MS: '50',
      PAYMENT_CALLBACK_JITTER_MS: '200',
    },
  });

  it('every copy is acknowledged 200 and the payment is applied once', async () => {
    const { stack, db, admin } = w;
    const sale = await stack.client.createSale(admin, { name: 'Paid', priceCents: 2500, stock: 3 });
    const buyer = await stack.client.guest('Payer');
    const bought = await stack.client.call<{ orderNo: string }>('POST', `/api/sales/${sale.id}/purchase`, {
      token: buyer.token,
      json: { token: await stack.client.submitToken(sale.id, buyer.token) },
    });
    expect(bought.status).toBe(202);
    const { orderNo } = bought.body;
    await stack.client.orderWritten(orderNo, buyer.token);
    const paid = await stack.client.call<{ status: string }>('POST', `/api/orders/${orderNo}/pay`, {
      token: buyer.token,
    });
    expect(paid.status).toBe(200);
    expect(paid.body.status).toBe('PAID');

    const counts = await waitFor(
      `${COPIES} delivered callbacks`,
      async () => callbackCounts((await stack.client.raw('GET', '/metrics')).text),
      (seen) => Object.values(seen).reduce((sum, n) => sum + n, 0) >= COPIES,
      15_000,
    );
    // Acknowledged, and recognised as the payment already applied by the synchronous answer.
    expect(counts).toEqual({ '200 duplicate': COPIES });
    const payments = (await db.query('SELECT status, transaction_id FROM payments WHERE order_no = ?', [orderNo])) as {
      status: string;
      transaction_id: string | null;
    }[];
    expect(payments).toHaveLength(1);
    expect(payments[0]!.status).toBe('SUCCEEDED');
    expect(payments[0]!.transaction_id).toMatch(/^txn_/);
    const order = await stack.client.call<{ status: string }>('GET', `/api/orders/${orderNo}`, { token: buyer.token });
    expect(order.body.status).toBe('PAID');
  });
});
