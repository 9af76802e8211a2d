import { buyerBucket, KeyBuilder, type RedisClient } from '@flash-sale/redis';
import { SaleCatalog } from '../../apps/api/src/sales/sale-catalog';
import { SoldOutGate } from '../../apps/api/src/purchase/strategies/redis-lua/sold-out-gate';
import { REDIS_CLIENT } from '@flash-sale/redis';
import { waitFor } from '../support/fixtures';
import { useStackWorld } from '../support/stack-world';

interface Accepted {
  orderNo: string;
  status: string;
}
interface ErrorBody {
  error: { code: string; message: string };
}
type Answer = Accepted | ErrorBody;
interface Guest {
  token: string;
  userId: string;
}

/**
 * The local "sold out" flag (purchase/strategies/redis-lua/sold-out-gate.ts + sold-out-fast-path.ts) on the real stack. The
 * flag's TTL is ten minutes here, so only what the gate is meant to react to — a return of units, published
 * by the release script — can clear it while a test runs.
 */
describe('local sold-out flag: answers as Redis would, forgets at once when units come back', () => {
  const w = useStackWorld({ env: { SOLD_OUT_FLAG_TTL_MS: '600000' } });
  let redis: RedisClient;
  let keys: KeyBuilder;

  beforeAll(() => {
    redis = w.stack.api.get<RedisClient>(REDIS_CLIENT);
    keys = w.stack.api.get(KeyBuilder);
  });

  // As a buyer sends it: a 503 + retry-after (the API re-verifying Redis after its connections dropped,
  // slower on a busy machine) means nothing happened, and the same token is sent again.
  const buy = (saleId: string, guest: Guest, token: string, quantity?: number) =>
    w.stack.client.callRetryingAfter<Answer>('POST', `/api/sales/${saleId}/purchase`, {
      token: guest.token,
      json: quantity === undefined ? { token } : { token, quantity },
    });

  const answer = (response: { status: number; body: Answer }) =>
    'error' in response.body ? `${response.status} ${response.body.error.code}` : `${response.status} QUEUED`;

  /** Redis answered SOLD_OUT once; the gate reads the sale in the background. Wait until it holds. */
  async function flagSet(saleId: string, guest: Guest, token: string): Promise<void> {
    const sale = await w.stack.api.get(SaleCatalog).get(saleId);
    await waitFor(
      'the sold-out flag',
      async () => w.stack.api.get(SoldOutGate).refuses(sale, guest.userId, token, 1),
      (refuses) => refuses,
      5_000,
    );
  }

  /** A new sale, three guests, and Ada's purchase of one unit, accepted. */
  async function saleWithAdasPurchase(fields: { stock: number; perUserLimit: number }) {
    const saleId = (await w.stack.client.createSale(w.admin, fields)).id;
    const [ada, bob, cyd] = await Promise.all([w.stack.client.guest(), w.stack.client.guest(), w.stack.client.guest()]);
    const adaToken = await w.stack.client.submitToken(saleId, ada.token);
    const bought = await buy(saleId, ada, adaToken);
    expect(bought.status).toBe(202);
    return { saleId, ada, bob, cyd, adaToken, bought };
  }

  it('while flagged, decides only what Redis would decide the same way; everything else still goes to Redis', async () => {
    const {
      saleId,
      ada,
      bob,
      cyd,
      adaToken,
      bought: first,
    } = await saleWithAdasPurchase({ stock: 1, perUserLimit: 2 });
    const bobToken = await w.stack.client.submitToken(saleId, bob.token);
    expect(answer(await buy(saleId, bob, bobToken))).toBe('410 SOLD_OUT'); // Redis's answer
    await flagSet(saleId, bob, bobToken);

    // Slip a unit into Redis behind the gate's back (no release script, so no message): from here on a
    // 410 for a fresh buyer can only come from the flag, answered by the fast path (the only place that
    // consults it) — Redis itself would sell.
    const stockKey = keys.bucket(buyerBucket(await w.stack.api.get(SaleCatalog).get(saleId), cyd.userId)).stock;
    await redis.incr(stockKey);
    try {
      const cydToken = await w.stack.client.submitToken(saleId, cyd.token);
      const refused = await buy(saleId, cyd, cydToken);
      expect(answer(refused)).toBe('410 SOLD_OUT');
      expect(refused.body).toEqual({ error: { code: 'SOLD_OUT', message: 'Sold out' } });
      expect(refused.headers['x-request-id']).toBeTruthy();

      // Earlier checks of docs/api.md's order still win, as Redis would answer them:
      expect(answer(await buy(saleId, cyd, bobToken))).toBe('403 TOKEN_INVALID'); // someone else's token
      expect(answer(await buy(saleId, cyd, `${cydToken.slice(0, -2)}xx`))).toBe('403 TOKEN_INVALID'); // forged
      expect(answer(await buy(saleId, cyd, cydToken, 3))).toBe('409 LIMIT_REACHED'); // over the limit of 2
      expect(answer(await buy(saleId, { ...cyd, token: 'not-a-jwt' }, cydToken))).toBe('401 UNAUTHENTICATED');
      expect(answer(await buy(saleId, cyd, 'short'))).toBe('400 VALIDATION_FAILED');
      // A buyer who reserved before goes to Redis: the replay answers the same order, not 410.
      const replay = await buy(saleId, ada, adaToken);
      expect(replay.status).toBe(202);
      // The same order, as it is now: written by the worker meanwhile, or not yet.
      expect((replay.body as Accepted).orderNo).toBe((first.body as Accepted).orderNo);
      expect(['QUEUED', 'PENDING_PAYMENT']).toContain((replay.body as Accepted).status);
    } finally {
      await redis.decr(stockKey);
    }
    const metrics = await w.stack.client.raw('GET', '/metrics');
    expect(metrics.text).toMatch(/flash_sale_purchases_total\{outcome="SOLD_OUT"\} 2/);
  });

  it('a returned unit is sold at once: the release script publishes it and the flag is dropped', async () => {
    const { saleId, ada, bob, bought } = await saleWithAdasPurchase({ stock: 1, perUserLimit: 1 });
    const orderNo = (bought.body as Accepted).orderNo;
    const bobToken = await w.stack.client.submitToken(saleId, bob.token);
    expect(answer(await buy(saleId, bob, bobToken))).toBe('410 SOLD_OUT');
    await flagSet(saleId, bob, bobToken);
    expect(answer(await buy(saleId, bob, bobToken))).toBe('410 SOLD_OUT'); // from the flag now

    await w.stack.client.orderWritten(orderNo, ada.token);
    const cancelled = await w.stack.client.call<{ status: string }>('POST', `/api/orders/${orderNo}/cancel`, {
      token: ada.token,
    });
    expect(cancelled.body.status).toBe('CANCELLED');
    // The message travels on its own connection: give it the few milliseconds it needs, no more.
    const rebought = await waitFor(
      "Bob's purchase of the returned unit",
      () => buy(saleId, bob, bobToken),
      (response) => response.status !== 410,
      2_000,
    );
    expect(rebought.status).toBe(202);

    const audit = await w.stack.client.call<{ ok: boolean; oversold: number }>(
      'GET',
      `/api/admin/sales/${saleId}/audit`,
      { token: w.admin },
    );
    expect(audit.body.oversold).toBe(0);
  });
  it("a buyer whose order MySQL holds and Redis's copy lost: the replay is that order, from the script and past the flag", async () => {
    const { saleId, ada, bob, cyd, adaToken, bought } = await saleWithAdasPurchase({ stock: 2, perUserLimit: 1 });
    const { orderNo } = bought.body as Accepted;
    await w.stack.client.orderWritten(orderNo, ada.token);

    // What a lagging replica promoted (or an older copy of the same incarnation, refreshed) holds once the
    // worker wrote an order it had read from the lost copy: Ada's purchase gone, her token unused again…
    const sale = keys.bucket(buyerBucket(await w.stack.api.get(SaleCatalog).get(saleId), ada.userId));
    await redis
      .multi()
      .hdel(sale.replays, adaToken)
      .hdel(sale.reservations, orderNo)
      .hdel(sale.buyers, ada.userId, `${ada.userId}:slots`, `${ada.userId}:orders`)
      .set(sale.token(adaToken), ada.userId, 'EX', 600)
      .exec();
    // A copy that replaces the one the API talked to comes over new connections (a restart, a failover):
    // every API connection drops and reconnects, as they would.
    await redis.call('CLIENT', 'KILL', 'TYPE', 'normal');
    // …and the last unit sold on it to someone else.
    expect(answer(await buy(saleId, bob, await w.stack.client.submitToken(saleId, bob.token)))).toBe('202 QUEUED');

    // Redis's copy would refuse her token (sold out); MySQL holds its order: that is the answer.
    const replay = await buy(saleId, ada, adaToken);
    expect(`${replay.status} ${(replay.body as Accepted).orderNo}`).toBe(`202 ${orderNo}`);

    // Once the sale is flagged sold out, the flag knows her too (from MySQL's orders): still her order.
    const cydToken = await w.stack.client.submitToken(saleId, cyd.token);
    expect(answer(await buy(saleId, cyd, cydToken))).toBe('410 SOLD_OUT');
    await flagSet(saleId, cyd, cydToken);
    const catalogSale = await w.stack.api.get(SaleCatalog).get(saleId);
    expect(w.stack.api.get(SoldOutGate).refuses(catalogSale, ada.userId, adaToken, 1)).toBe(false);
    const replayWhileFlagged = await buy(saleId, ada, adaToken);
    expect(`${replayWhileFlagged.status} ${(replayWhileFlagged.body as Accepted).orderNo}`).toBe(`202 ${orderNo}`);
  });
});
