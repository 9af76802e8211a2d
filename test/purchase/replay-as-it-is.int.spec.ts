import type { SaleStrategy } from '@flash-sale/contract';
import { bucketsOf, createRedisClient, KeyBuilder } from '@flash-sale/redis';
import { StockReconciliation } from '../../apps/worker/src/lifecycle/stock-reconciliation';
import { waitFor } from '../support/fixtures';
import { type StackWorld, useStackWorld } from '../support/stack-world';

type Answer = { orderNo?: string; status?: string; error?: { code: string } };

/** Buys with `token` as the storefront does; expects the strategy's first answer. */
async function buyWith(w: StackWorld, saleId: string, guestToken: string, token: string) {
  return w.client.purchaseAsStorefront<Answer>(saleId, guestToken, token);
}

async function cancel(w: StackWorld, orderNo: string, guestToken: string): Promise<void> {
  const cancelled = await w.client.call<{ status: string }>('POST', `/api/orders/${orderNo}/cancel`, {
    token: guestToken,
  });
  expect(cancelled.body.status).toBe('CANCELLED');
}

async function orderCount(w: StackWorld, saleId: string): Promise<number> {
  return Number((await w.db.query('SELECT COUNT(*) AS n FROM orders WHERE sale_id = ?', [saleId]))[0].n);
}

/**
 * A replayed token answers its order as it is (docs/api.md "Buying"): the same order number, its status
 * now — a cancelled order says `CANCELLED` — with the HTTP status the strategy answers a first purchase.
 * It never reserves again.
 */
describe('a replay answers its order as it is (real Redis and MariaDB)', () => {
  const w = useStackWorld({ database: true });

  it.each<[SaleStrategy, number]>([
    ['redis-lua', 202],
    ['db-batched', 201],
    ['db-optimistic', 201],
    ['redis-lock', 201],
  ])('%s: buy, cancel, replay → the cancelled order, nothing sold again', async (strategy, firstStatus) => {
    const sale = await w.client.createSale(w.admin, { strategy, stock: 3, perUserLimit: 2 });
    const buyer = await w.client.guest();
    const token = await w.client.submitToken(sale.id, buyer.token);
    const first = await buyWith(w, sale.id, buyer.token, token);
    expect(first.status).toBe(firstStatus);
    const orderNo = first.body.orderNo!;
    await w.client.orderWritten(orderNo, buyer.token);
    await cancel(w, orderNo, buyer.token);

    const again = await Promise.all([1, 2, 3].map(() => buyWith(w, sale.id, buyer.token, token)));
    for (const replay of again) {
      expect(replay.status).toBe(firstStatus);
      expect(replay.body).toEqual({ orderNo, status: 'CANCELLED' });
    }
    expect(await orderCount(w, sale.id)).toBe(1);
    // The cancelled unit came back to the sale; nobody took it again with the spent token.
    await waitFor(
      'the unit back',
      async () => (await w.client.call<{ remaining: number }>('GET', `/api/sales/${sale.id}`)).body.remaining,
      (remaining) => remaining === 3,
    );
  });

  it('redis-lua: a replay of a written, unpaid order answers PENDING_PAYMENT', async () => {
    const sale = await w.client.createSale(w.admin, { strategy: 'redis-lua', stock: 2 });
    const buyer = await w.client.guest();
    const token = await w.client.submitToken(sale.id, buyer.token);
    const first = await buyWith(w, sale.id, buyer.token, token);
    expect(first.body.status).toBe('QUEUED');
    await w.client.orderWritten(first.body.orderNo!, buyer.token);
    const replay = await buyWith(w, sale.id, buyer.token, token);
    expect(replay.status).toBe(202);
    expect(replay.body).toEqual({ orderNo: first.body.orderNo, status: 'PENDING_PAYMENT' });
  });
});

/**
 * The copy of Redis that a restore brings back was saved after the token was issued and before it bought:
 * it holds the token unused. Bought, cancelled, then Redis restored from that copy: the replay must answer
 * the cancelled order, not reserve a new unit under its number (which the worker would take for the
 * written order, leaving the unit stranded for good).
 */
describe('a spent token on a copy of Redis from before it bought (private redis-server, real MariaDB)', () => {
  const w = useStackWorld({
    redis: 'private',
    database: true,
    env: { RECOVERY_GRACE_MS: '500', RECONCILE_INTERVAL_MS: '3600000' },
  });

  it('answers the cancelled order, sells nothing again, and the books close', async () => {
    const sale = await w.client.createSale(w.admin, { strategy: 'redis-lua', stock: 3, perUserLimit: 2 });
    const buyer = await w.client.guest();
    const token = await w.client.submitToken(sale.id, buyer.token);
    const keyBuilder = new KeyBuilder(w.testEnv.config.redis.keyPrefix);
    const keys = bucketsOf(sale).flatMap((bucket) => [
      ...keyBuilder.bucket(bucket).all(),
      keyBuilder.bucket(bucket).token(token),
    ]);
    const client = createRedisClient(w.testEnv.config.redis);
    const copy = await Promise.all(keys.map(async (key) => ({ key, dump: await client.dumpBuffer(key) })));
    client.disconnect();
    expect(copy.some(({ dump }) => dump !== null)).toBe(true);

    const first = await buyWith(w, sale.id, buyer.token, token);
    expect(first.status).toBe(202);
    const orderNo = first.body.orderNo!;
    await w.client.orderWritten(orderNo, buyer.token);
    await cancel(w, orderNo, buyer.token);

    await w.redisServer.kill();
    await w.redisServer.restart();
    const restorer = createRedisClient(w.testEnv.config.redis);
    for (const { key, dump } of copy) if (dump) await restorer.restore(key, 0, dump, 'REPLACE');
    restorer.disconnect();

    const replay = await buyWith(w, sale.id, buyer.token, token);
    expect(replay.status).toBe(202);
    expect(replay.body).toEqual({ orderNo, status: 'CANCELLED' });
    expect(await orderCount(w, sale.id)).toBe(1);

    const reconciliation = w.stack.worker!.get(StockReconciliation);
    const audit = await waitFor(
      'the books closed',
      async () => {
        await reconciliation.reconcile(sale.id);
        return (
          await w.client.call<{ ok: boolean; drift: number; books: { inDoubt: number } }>(
            'GET',
            `/api/admin/sales/${sale.id}/audit`,
            { token: w.admin },
          )
        ).body;
      },
      (body) => body.books.inDoubt === 0 && body.drift === 0,
      15_000,
    );
    expect(audit.ok).toBe(true);
    const remaining = (await w.client.call<{ remaining: number }>('GET', `/api/sales/${sale.id}`)).body.remaining;
    expect(remaining).toBe(3);
  });
});
