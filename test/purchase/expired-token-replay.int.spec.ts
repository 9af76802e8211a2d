import type { PurchaseAnswer } from '../support/api-client';
import { waitFor } from '../support/fixtures';
import { useStackWorld } from '../support/stack-world';

const TOKEN_TTL_SECONDS = 5;

/**
 * A submit token that bought is answered by its order whenever it is sent again, however old: its expiry
 * only matters to a token that has not bought (docs/api.md's replay). Redis answers so from its record of
 * the token; these are the cases where MySQL must, with the same answer — a sale that sells from MySQL,
 * and a Redis that lost its data, whose reload brings back only the orders still holding units.
 */
describe('a token that bought, sent again after its expiry (private redis-server, real MariaDB)', () => {
  const w = useStackWorld({ redis: 'private', env: { SUBMIT_TOKEN_TTL_SECONDS: String(TOKEN_TTL_SECONDS) } });

  async function boughtThenCancelled(strategy: 'redis-lua' | 'db-optimistic') {
    const saleId = (await w.client.createSale(w.admin, { name: `Expired replay (${strategy})`, stock: 5, strategy }))
      .id;
    const buyer = await w.client.guest();
    const token = await w.client.submitToken(saleId, buyer.token);
    const send = () =>
      w.client.call<PurchaseAnswer>('POST', `/api/sales/${saleId}/purchase`, { token: buyer.token, json: { token } });
    const bought = await send();
    expect([201, 202]).toContain(bought.status);
    const orderNo = bought.body.orderNo!;
    await waitFor(
      'the order written',
      async () =>
        (await w.client.call<{ status: string }>('GET', `/api/orders/${orderNo}`, { token: buyer.token })).body,
      (order) => order.status === 'PENDING_PAYMENT',
      20_000,
    );
    const cancelled = await w.client.call('POST', `/api/orders/${orderNo}/cancel`, { token: buyer.token });
    expect(cancelled.status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, TOKEN_TTL_SECONDS * 1000 + 500));
    return { orderNo, send };
  }

  it('db-optimistic: the order, not 403', async () => {
    const { orderNo, send } = await boughtThenCancelled('db-optimistic');
    const again = await send();
    expect(`${again.status} ${again.body.orderNo ?? again.body.error?.code}`).toBe(`201 ${orderNo}`);
  });

  it('redis-lua, Redis back without its data: the order, not 403', async () => {
    const { orderNo, send } = await boughtThenCancelled('redis-lua');
    await w.redisServer.kill();
    await w.redisServer.restart();
    const again = await waitFor('an answer other than 503', send, (response) => response.status !== 503, 20_000);
    // The order as it is, with the status its first purchase had (a Redis reservation: 202).
    expect(`${again.status} ${again.body.orderNo ?? again.body.error?.code}`).toBe(`202 ${orderNo}`);
  });
});
