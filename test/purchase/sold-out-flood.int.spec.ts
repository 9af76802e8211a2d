import { createRedisClient, type RedisClient } from '@flash-sale/redis';
import { SaleCatalog } from '../../apps/api/src/sales/sale-catalog';
import { SoldOutGate } from '../../apps/api/src/purchase/strategies/redis-lua/sold-out-gate';
import { waitFor } from '../support/fixtures';
import { startStack, type RunningStack } from '../support/running-stack';
import { useStackWorld } from '../support/stack-world';

interface Guest {
  token: string;
  userId: string;
}
type Answer = { orderNo: string; status: string } | { error: { code: string } };

const answer = (response: { status: number; body: Answer }) =>
  'error' in response.body
    ? `${response.status} ${response.body.error.code}`
    : `${response.status} ${response.body.status}`;

const buy = (stack: RunningStack, saleId: string, guest: Guest, token: string) =>
  stack.client.call<Answer>('POST', `/api/sales/${saleId}/purchase`, { token: guest.token, json: { token } });

/** Redis answered SOLD_OUT on `stack`; its gate reads the sale in the background. Wait until it holds. */
async function flagSet(stack: RunningStack, saleId: string, guest: Guest, token: string): Promise<void> {
  const sale = await stack.api.get(SaleCatalog).get(saleId);
  await waitFor(
    'the sold-out flag',
    async () => stack.api.get(SoldOutGate).refuses(sale, guest.userId, token, 1),
    Boolean,
    5_000,
  );
}

/**
 * The sold-out flood (docs/api.md's sold-out exception, docs/architecture.md "Sold out: the local flag"):
 * an instance that knows a sale is sold out answers 410 without Redis, and learns at once — from a unit
 * returned on another instance — that it is not sold out any more.
 */
describe('sold-out flood: learnt and unlearnt across instances', () => {
  let second: RunningStack; // the other API instance, with the worker

  // Registered before the world's: jest runs `afterAll` hooks in the order they were registered, and the
  // second instance closes before the world drops the database and the keys under it.
  afterAll(() => second?.close());

  // The first instance (`w.stack`), without a worker. Ten minutes: only a stock-return message can clear
  // a flag while the test runs.
  const w = useStackWorld({
    worker: false,
    database: true,
    env: { SOLD_OUT_FLAG_TTL_MS: '600000', EXPIRY_SWEEP_INTERVAL_MS: '200' },
  });

  beforeAll(async () => {
    second = await startStack(w.testEnv.config);
  });

  async function writtenOrder(saleId: string, buyer: Guest): Promise<string> {
    const first = w.stack;
    const bought = await buy(first, saleId, buyer, await first.client.submitToken(saleId, buyer.token));
    expect(bought.status).toBe(202);
    const orderNo = (bought.body as { orderNo: string }).orderNo;
    await second.client.orderWritten(orderNo, buyer.token);
    return orderNo;
  }

  it('a flagged instance sells units cancelled, then expired, on the other instance', async () => {
    const { stack: first, db, admin } = w;
    const saleId = (await first.client.createSale(admin, { stock: 2 })).id;
    const [ada, eve, bob, cyd] = (await Promise.all([1, 2, 3, 4].map(() => first.client.guest()))) as [
      Guest,
      Guest,
      Guest,
      Guest,
    ];
    const adaOrder = await writtenOrder(saleId, ada);
    const eveOrder = await writtenOrder(saleId, eve);

    const bobToken = await first.client.submitToken(saleId, bob.token);
    const cydToken = await first.client.submitToken(saleId, cyd.token);
    expect(answer(await buy(first, saleId, bob, bobToken))).toBe('410 SOLD_OUT'); // Redis's answer
    await flagSet(first, saleId, bob, bobToken);
    expect(answer(await buy(first, saleId, cyd, cydToken))).toBe('410 SOLD_OUT'); // the flag's

    // A cancel on the second instance: its lease's message reaches the first, which sells the unit.
    const cancelled = await second.client.call<{ status: string }>('POST', `/api/orders/${adaOrder}/cancel`, {
      token: ada.token,
    });
    expect(cancelled.body.status).toBe('CANCELLED');
    /** Sends the buyer's purchase until the first instance stops answering 410: a unit came back. */
    const buyReturnedUnit = (description: string, buyer: Guest, token: string, timeoutMs: number) =>
      waitFor(
        description,
        () => buy(first, saleId, buyer, token),
        (r) => r.status !== 410,
        timeoutMs,
      );
    const bobs = await buyReturnedUnit('Bob buys the cancelled unit', bob, bobToken, 2_000);
    expect(answer(bobs)).toBe('202 QUEUED');

    // Sold out again; then the worker (beside the second instance) expires Eve's unpaid order.
    expect(answer(await buy(first, saleId, cyd, cydToken))).toBe('410 SOLD_OUT');
    await flagSet(first, saleId, cyd, cydToken);
    await db.query('UPDATE orders SET expires_at = ? WHERE order_no = ?', [new Date(Date.now() - 1_000), eveOrder]);
    const cyds = await buyReturnedUnit('Cyd buys the expired unit', cyd, cydToken, 10_000);
    expect(answer(cyds)).toBe('202 QUEUED');

    const audit = await waitFor(
      'books closed',
      async () =>
        (
          await second.client.call<{ ok: boolean; oversold: number; held: number }>(
            'GET',
            `/api/admin/sales/${saleId}/audit`,
            { token: admin },
          )
        ).body,
      (report) => report.ok && report.held === 2,
      10_000,
    );
    expect(audit).toMatchObject({ ok: true, oversold: 0, held: 2 });
  });
});

/** The sold-out answer on an instance of its own Redis, so that every command Redis runs is counted. */
describe('sold-out flood: no Redis command and no rate limit per answer', () => {
  const w = useStackWorld({
    redis: 'private',
    env: {
      SOLD_OUT_FLAG_TTL_MS: '600000',
      // Three purchases per buyer in 60 s: the flood below would be refused with 429 if it counted.
      RATE_LIMIT_PURCHASES_POINTS: '3',
      RATE_LIMIT_PURCHASES_SECONDS: '60',
    },
  });
  let probe: RedisClient;

  beforeAll(() => {
    probe = createRedisClient({ url: w.redisServer.url, clusterNodes: [] });
  });

  afterAll(() => probe.disconnect());

  /**
   * Commands Redis has run so far, but the probe's own INFO and the PINGs each connection's silent-link watch
   * sends every two seconds (libs/redis silent-link-watch.ts): those come with time, not with answers.
   */
  async function commandsRun(): Promise<number> {
    const stats = await probe.info('commandstats');
    let total = 0;
    for (const match of stats.matchAll(/^cmdstat_([a-z|_-]+):calls=(\d+)/gm)) {
      if (match[1] !== 'info' && match[1] !== 'ping') total += Number(match[2]);
    }
    return total;
  }

  it('answers a flood of sold-out purchases with 410 while Redis runs nothing', async () => {
    const { stack, admin } = w;
    const saleId = (await stack.client.createSale(admin, { stock: 1 })).id;
    const [ada, ...buyers] = await Promise.all(Array.from({ length: 11 }, () => stack.client.guest()));
    const adaBought = await buy(stack, saleId, ada!, await stack.client.submitToken(saleId, ada!.token));
    expect(adaBought.status).toBe(202);
    const tokens = await Promise.all(buyers.map((buyer) => stack.client.submitToken(saleId, buyer.token)));
    expect(answer(await buy(stack, saleId, buyers[0]!, tokens[0]!))).toBe('410 SOLD_OUT');
    await flagSet(stack, saleId, buyers[0]!, tokens[0]!);
    // The order is written and the worker is stopped: from here on, nothing else talks to this Redis.
    await stack.client.orderWritten((adaBought.body as { orderNo: string }).orderNo, ada!.token);
    await stack.worker!.close();
    // The API's load sampler sees the backlog gone; and the API's copy of the sale's definition expires
    // (SaleCatalog keeps it 2 s): the flood finds the flag but not the sale, as after a quiet spell.
    await new Promise((resolve) => setTimeout(resolve, 2_500));

    const before = await commandsRun();
    // Ten buyers, ten purchases each (their limit is three): 100 answers, all 410, none 429.
    const answers = await Promise.all(
      buyers.flatMap((buyer, i) => Array.from({ length: 10 }, () => buy(stack, saleId, buyer, tokens[i]!))),
    );
    const after = await commandsRun();
    expect(answers.map(answer)).toEqual(Array(100).fill('410 SOLD_OUT'));
    expect(answers.every((response) => response.headers['x-request-id'])).toBe(true);
    expect(after - before).toBe(0);
  });
});
