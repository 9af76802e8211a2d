import { http, HttpResponse } from 'msw';
import type { Order, Sale } from '@flash-sale/contract';
import { aSale, errorBody } from './api-fixtures';
import { server } from './server';

/**
 * A scripted API for one sale: records every token and purchase request, so tests can assert how many
 * purchases a double click sent and with which submit token. `purchaseAnswers` are used in order (the
 * last one repeats); by default a purchase is accepted as QUEUED and the order becomes PENDING_PAYMENT
 * on the next read. The sale is served as it is at each read, so a test may change it.
 */
export function fakeShop(
  options: {
    sale?: Sale;
    /** An answer of `undefined` falls through to the default (accepted, or the earlier order's replay). */
    purchaseAnswers?: ((token: string) => Response | undefined | Promise<Response | undefined>)[];
    /** Answers the token request with this body (`{pass}` on a room's sale) instead of issuing a token, if it returns one. */
    tokenAnswer?: (body: unknown) => Response | undefined;
  } = {},
) {
  const sale = options.sale ?? aSale();
  /** `tokenBodies`: each token request's JSON body, `null` when it had none. */
  const calls = {
    tokens: 0,
    tokenBodies: [] as unknown[],
    purchases: [] as { token: string; quantity: number }[],
    pays: 0,
  };
  const orders = new Map<string, Order>();
  const orderNoByToken = new Map<string, string>();
  let orderReads = 0;

  const accept = (token: string) => {
    const orderNo = `S${sale.id}-ORDER${orders.size + 1}`;
    orders.set(orderNo, {
      orderNo,
      saleId: sale.id,
      userId: 'u-1',
      quantity: 1,
      amountCents: sale.priceCents,
      status: 'QUEUED',
      createdAt: new Date().toISOString(),
    });
    orderNoByToken.set(token, orderNo);
    return HttpResponse.json({ orderNo, status: 'QUEUED' }, { status: 202 });
  };

  server.use(
    http.get(`/api/sales/${sale.id}`, () => HttpResponse.json(sale)),
    http.get('/api/sales', () => HttpResponse.json([sale])),
    http.post(`/api/sales/${sale.id}/tokens`, async ({ request }) => {
      const text = await request.text();
      const body: unknown = text ? JSON.parse(text) : null;
      calls.tokenBodies.push(body);
      const scripted = options.tokenAnswer?.(body);
      if (scripted) return scripted;
      calls.tokens += 1;
      return HttpResponse.json(
        { token: `submit-${calls.tokens}`, expiresAt: new Date(Date.now() + 120_000).toISOString() },
        { status: 201 },
      );
    }),
    http.post(`/api/sales/${sale.id}/purchase`, async ({ request }) => {
      const body = (await request.json()) as { token: string; quantity: number };
      calls.purchases.push(body);
      const answers = options.purchaseAnswers ?? [];
      const answer = answers[Math.min(calls.purchases.length - 1, answers.length - 1)];
      const scripted = answer ? await answer(body.token) : undefined;
      if (scripted) return scripted;
      // A replay of a token that already succeeded answers the same order (docs/api.md).
      const earlier = orderNoByToken.get(body.token);
      return earlier ? HttpResponse.json({ orderNo: earlier, status: 'QUEUED' }, { status: 202 }) : accept(body.token);
    }),
    http.get('/api/orders', () => HttpResponse.json([...orders.values()].reverse())),
    http.get('/api/orders/:orderNo', ({ params }) => {
      const order = orders.get(String(params['orderNo']));
      if (!order) return HttpResponse.json(errorBody('ORDER_NOT_FOUND'), { status: 404 });
      // The worker writes the row between the first and the second read.
      orderReads += 1;
      if (order.status === 'QUEUED' && orderReads > 1) {
        order.status = 'PENDING_PAYMENT';
        order.expiresAt = new Date(Date.now() + 600_000).toISOString();
      }
      return HttpResponse.json(order);
    }),
    http.post('/api/orders/:orderNo/pay', ({ params }) => {
      calls.pays += 1;
      const order = orders.get(String(params['orderNo']));
      if (!order) return HttpResponse.json(errorBody('ORDER_NOT_FOUND'), { status: 404 });
      order.status = 'PAID';
      order.paidAt = new Date().toISOString();
      return HttpResponse.json(order);
    }),
  );
  return { sale, calls, orders };
}
