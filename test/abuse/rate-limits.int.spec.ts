import { createRedisClient } from '@flash-sale/redis';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createApiApp } from '../../apps/api/src/app.factory';
import { ApiClient, type ApiResponse } from '../support/api-client';
import { useStackWorld } from '../support/stack-world';

interface ErrorBody {
  error?: { code: string };
}

/**
 * Floods from one client against TWO API instances that share one Redis: every limit holds across
 * both (the counts are measured), refusals are `429 RATE_LIMITED` with `retry-after`, and honest
 * buyers under the limits are unaffected. The limits are the shipped `standard` profile.
 */
describe('rate limits across two API instances (real Redis and MariaDB)', () => {
  // The standard profile's budgets (their windows are lengthened below).
  const GUEST_LIMIT = 20; // per IP
  const TOKEN_LIMIT = 10; // per user
  const PURCHASE_LIMIT = 10; // per user and sale
  const ADMIN_ATTEMPTS = 10; // per IP
  const ADMIN_FAILURES_BEFORE_LOCKOUT = 5;

  let second: NestFastifyApplication; // instance B
  let urls: [string, string];
  let attackerClients: [ApiClient, ApiClient];
  const extraClients: ApiClient[] = [];
  let saleId: string;

  // Registered before the world's: jest runs `afterAll` hooks in the order they were registered, and
  // instance B and the clients close before the world drops the database and the keys under them.
  afterAll(async () => {
    await Promise.all([...attackerClients, ...extraClients].map((client) => client.close()));
    await second.close();
  });

  // Instance A, with the worker, and an admin signed in on it.
  const w = useStackWorld({
    env: {
      RATE_LIMIT_PROFILE: 'standard',
      RATE_LIMIT_PURCHASES_POINTS: '',
      RATE_LIMIT_SUBMIT_TOKENS_POINTS: '',
      // The shipped budgets, in windows longer than the slowest run of this file (the counts are what is
      // measured; a window ending mid-flood on a busy machine would admit a second budget), and long
      // enough to read the sale's counter afterwards (its shipped window is 1 s).
      RATE_LIMIT_GUEST_SIGN_IN_SECONDS: '600',
      RATE_LIMIT_ADMIN_SIGN_IN_SECONDS: '600',
      RATE_LIMIT_SUBMIT_TOKENS_SECONDS: '600',
      RATE_LIMIT_PURCHASES_SECONDS: '600',
      RATE_LIMIT_SALE_PURCHASES_SECONDS: '600',
    },
  });

  beforeAll(async () => {
    expect(w.testEnv.config.protection.limits.guestSignInPerIp.points).toBe(GUEST_LIMIT);
    expect(w.testEnv.config.protection.limits.purchasesPerUser.points).toBe(PURCHASE_LIMIT);
    second = await createApiApp(w.testEnv.config, { logger: false });
    await second.listen({ port: 0, host: '0.0.0.0' });
    const port = (second.getHttpServer().address() as { port: number }).port;
    urls = [w.client.baseUrl, `http://127.0.0.1:${port}`];
    // The attacker: one machine (127.0.0.2) talking to both instances.
    attackerClients = [new ApiClient(urls[0], 128, '127.0.0.2'), new ApiClient(urls[1], 128, '127.0.0.2')];
    const sale = await w.client.createSale(w.admin, { name: 'Flooded', priceCents: 100, stock: 100 });
    saleId = sale.id;
  });

  function clientAt(ip: string, instance: 0 | 1): ApiClient {
    const client = new ApiClient(urls[instance], 16, ip);
    extraClients.push(client);
    return client;
  }

  /** `count` requests at once, alternating between the two instances. */
  function flood<T>(count: number, send: (client: ApiClient) => Promise<ApiResponse<T>>): Promise<ApiResponse<T>[]> {
    return Promise.all(Array.from({ length: count }, (_, i) => send(attackerClients[(i % 2) as 0 | 1])));
  }

  function tally(responses: ApiResponse<unknown>[]): Record<number, number> {
    const counts: Record<number, number> = {};
    for (const response of responses) counts[response.status] = (counts[response.status] ?? 0) + 1;
    return counts;
  }

  function expectRateLimited(responses: ApiResponse<unknown>[]) {
    for (const response of responses.filter((r) => r.status === 429)) {
      expect((response.body as ErrorBody).error?.code).toBe('RATE_LIMITED');
      expect(Number(response.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(response.headers['x-request-id']).toBeTruthy();
    }
  }

  it('guest minting from one IP is held to its limit across both instances; other IPs are unaffected', async () => {
    const responses = await flood(100, (client) => client.call('POST', '/api/auth/guest', { json: {} }));
    const counts = tally(responses);
    console.log(`guest minting, 100 at once from one IP over 2 instances: ${JSON.stringify(counts)}`);
    expect(counts).toEqual({ 201: GUEST_LIMIT, 429: 100 - GUEST_LIMIT });
    expectRateLimited(responses);
    // Another shopper, on another address, signs in on either instance.
    for (const instance of [0, 1] as const) {
      expect(
        (await clientAt(`127.0.0.${10 + instance}`, instance).call('POST', '/api/auth/guest', { json: {} })).status,
      ).toBe(201);
    }
  });

  it('token minting and purchases by one user are held to their limits; honest buyers all buy', async () => {
    const attacker = await clientAt('127.0.0.3', 0).guest('Attacker');
    const tokens = await flood(60, (client) =>
      client.call<{ token?: string }>('POST', `/api/sales/${saleId}/tokens`, { token: attacker.token }),
    );
    const tokenCounts = tally(tokens);
    console.log(`submit tokens, 60 at once by one user over 2 instances: ${JSON.stringify(tokenCounts)}`);
    expect(tokenCounts).toEqual({ 201: TOKEN_LIMIT, 429: 60 - TOKEN_LIMIT });
    expectRateLimited(tokens);
    const attackerToken = tokens.find((response) => response.status === 201)!.body.token!;

    // Honest buyers, each on their own address, sign in and take a token before the flood starts.
    const honest = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const client = clientAt(`127.0.1.${i + 1}`, (i % 2) as 0 | 1);
        const buyer = await client.guest(`Honest ${i}`);
        return { client, buyer, submitToken: await client.submitToken(saleId, buyer.token) };
      }),
    );
    const [attackerResponses, honestResponses] = await Promise.all([
      flood(80, (client) =>
        client.call<{ orderNo?: string }>('POST', `/api/sales/${saleId}/purchase`, {
          token: attacker.token,
          json: { token: attackerToken },
        }),
      ),
      Promise.all(
        honest.map(({ client, buyer, submitToken }) =>
          client.call('POST', `/api/sales/${saleId}/purchase`, { token: buyer.token, json: { token: submitToken } }),
        ),
      ),
    ]);
    const attackerCounts = tally(attackerResponses);
    console.log(`purchases, 80 at once by one user over 2 instances: ${JSON.stringify(attackerCounts)}`);
    // Every admitted attempt is the one order or its replay (same token): 202 with the same order number.
    expect(attackerCounts).toEqual({ 202: PURCHASE_LIMIT, 429: 80 - PURCHASE_LIMIT });
    expect(new Set(attackerResponses.filter((r) => r.status === 202).map((r) => r.body.orderNo)).size).toBe(1);
    expectRateLimited(attackerResponses);
    expect(tally(honestResponses)).toEqual({ 202: 20 });
    // The refused flood did not spend the sale's budget: it counted only the admitted purchases.
    const redis = createRedisClient(w.testEnv.config.redis);
    const saleCounter = await redis.get(`${w.testEnv.config.redis.keyPrefix}:{sale:${saleId}}:rl:purchase-sale`);
    redis.disconnect();
    expect(Number(saleCounter)).toBe(PURCHASE_LIMIT + 20);
  });

  it('a buyer over the purchase limit is answered 429 first on every path but the sold-out answer', async () => {
    const client = clientAt('127.0.0.4', 1);
    const greedy = await client.guest('Greedy');
    /** The buyer's whole budget on one sale, one request at a time, then one more: its statuses. */
    const spend = async (sale: string, json: unknown) => {
      const statuses: number[] = [];
      for (let i = 0; i <= PURCHASE_LIMIT; i++) {
        statuses.push((await client.call('POST', `/api/sales/${sale}/purchase`, { token: greedy.token, json })).status);
      }
      return statuses;
    };
    const withinBudget = (statuses: number[], status: number) => {
      expect(statuses.slice(0, PURCHASE_LIMIT)).toEqual(Array(PURCHASE_LIMIT).fill(status));
      expect(statuses[PURCHASE_LIMIT]).toBe(429);
    };

    // The reservation script counts the limits itself: the buyer's purchase, its replays, then 429 —
    // also for a body that would be a 400 (docs/api.md: 429 comes first).
    const live = (await w.client.createSale(w.admin, { stock: 100 })).id;
    const token = await client.submitToken(live, greedy.token);
    withinBudget(await spend(live, { token }), 202);
    const invalid = await client.call<ErrorBody>('POST', `/api/sales/${live}/purchase`, {
      token: greedy.token,
      json: { token: 42 },
    });
    expect([invalid.status, invalid.body.error?.code]).toEqual([429, 'RATE_LIMITED']);

    // Answers given without the script spend the same budget before they are given.
    withinBudget(await spend('987654321', { token: 'whatever' }), 404); // unknown sale
    const dbSale = (await w.client.createSale(w.admin, { stock: 5, strategy: 'db-optimistic' })).id;
    withinBudget(await spend(dbSale, { token }), 403); // another sale's token
    const soldOut = (await w.client.createSale(w.admin, { stock: 1 })).id;
    const first = await clientAt('127.0.0.5', 0).guest();
    const firstToken = await clientAt('127.0.0.5', 0).submitToken(soldOut, first.token);
    expect(
      (
        await clientAt('127.0.0.5', 0).call('POST', `/api/sales/${soldOut}/purchase`, {
          token: first.token,
          json: { token: firstToken },
        })
      ).status,
    ).toBe(202);
    // Except the sold-out answer (docs/api.md's exception): a final answer that changes nothing counts none.
    expect(await spend(soldOut, { token: await client.submitToken(soldOut, greedy.token) })).toEqual(
      Array(PURCHASE_LIMIT + 1).fill(410),
    );
  });

  it('admin password guessing from one IP is capped and locks out that IP only', async () => {
    const guesses = await flood(40, (client) =>
      client.call('POST', '/api/auth/admin', { json: { password: `guess-${Math.random()}` } }),
    );
    const counts = tally(guesses);
    console.log(`admin sign-in, 40 wrong guesses at once from one IP over 2 instances: ${JSON.stringify(counts)}`);
    expect(counts[401]! + counts[429]!).toBe(40);
    expect(counts[401]).toBeLessThanOrEqual(ADMIN_ATTEMPTS);
    expectRateLimited(guesses);

    // Locked out: even the right password from that IP waits.
    const password = w.testEnv.env['ADMIN_PASSWORD']!;
    const locked = await attackerClients[1].call('POST', '/api/auth/admin', { json: { password } });
    expect(locked.status).toBe(429);
    // The admin, elsewhere, is not locked out by it — on either instance.
    for (const instance of [0, 1] as const) {
      const elsewhere = await clientAt(`127.0.0.${60 + instance}`, instance).call('POST', '/api/auth/admin', {
        json: { password },
      });
      expect(elsewhere.status).toBe(201);
    }
  });

  it('consecutive wrong passwords lock an IP out before its attempt budget is spent', async () => {
    const client = clientAt('127.0.0.70', 0);
    const statuses: number[] = [];
    for (let attempt = 0; attempt < ADMIN_FAILURES_BEFORE_LOCKOUT + 2; attempt++) {
      statuses.push((await client.call('POST', '/api/auth/admin', { json: { password: 'nope' } })).status);
    }
    console.log(`admin sign-in, sequential wrong guesses from one IP: ${statuses.join(' ')}`);
    expect(statuses).toEqual([...Array(ADMIN_FAILURES_BEFORE_LOCKOUT).fill(401), 429, 429]);
  });
});
