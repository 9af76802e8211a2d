import { request } from 'undici';
import { accessCases } from './access-cases';
import { type AttackWorld, hour, iso, type Send, signed } from './attack-world';
import { callbackCases } from './callback-cases';
import { exposureCases } from './exposure-cases';
import { purchaseBodyCases } from './purchase-body-cases';
import { routeBodyCases } from './route-body-cases';
import { countRows } from '../support/fixtures';
import { useStackWorld } from '../support/stack-world';
import { productionSecrets } from '../support/test-env';
import { scanKeys } from '../support/test-redis';

interface ErrorBody {
  error?: { code: string; message: string };
}

interface Answer {
  status: number;
  body: unknown;
  headers: Record<string, string | string[] | undefined>;
}

/**
 * What an attacker sends, on every route: nesting bombs, prototype keys, huge and odd bodies, wrong
 * types, forged, expired, unsigned and exp-less JWTs, tampered and replayed payment callbacks, oversize
 * URLs and headers, what a production deployment exposes (the cases: test/abuse/). Each case
 * answers docs/api.md's status and code with the contract's body and an `x-request-id`, and writes
 * nothing: row counts and (non-rate-limit) Redis keys are the same after. The API runs with
 * NODE_ENV=production and strong secrets, as deployed.
 */
describe('attack input (real API on MariaDB and Redis)', () => {
  const world = useStackWorld({
    worker: false,
    database: true,
    saleRedis: true,
    // No provider callbacks in this file: a late one would write while a case is being measured.
    env: { PAYMENT_CALLBACK_COPIES: '0', ...productionSecrets() },
  }) as AttackWorld;

  beforeAll(async () => {
    const { stack, db, testEnv, admin } = world;
    world.jwtSecret = testEnv.env['JWT_SECRET']!;
    world.metricsToken = testEnv.env['METRICS_TOKEN']!;
    const buyer = await stack.client.guest('Buyer');
    world.buyer = buyer;
    world.other = await stack.client.guest('Other');
    const sale = (strategy: string) =>
      stack.client.call<{ id: string }>('POST', '/api/admin/sales', {
        token: admin,
        json: { name: 'Sale', priceCents: 100, stock: 5, endsAt: iso(hour), strategy },
      });
    world.saleId = (await sale('redis-lua')).body.id;
    const dbSaleId = (await sale('db-optimistic')).body.id;
    world.dbSaleId = dbSaleId;
    // One written order of the buyer's, paid, so that order and callback routes have a real target.
    const bought = await stack.client.call<{ orderNo: string }>('POST', `/api/sales/${dbSaleId}/purchase`, {
      token: buyer.token,
      json: { token: await stack.client.submitToken(dbSaleId, buyer.token) },
    });
    expect(bought.status).toBe(201);
    world.orderNo = bought.body.orderNo;
    expect((await stack.client.call('POST', `/api/orders/${world.orderNo}/pay`, { token: buyer.token })).status).toBe(
      200,
    );
    const [payment] = (await db.query('SELECT out_trade_no, transaction_id, amount_cents FROM payments')) as {
      out_trade_no: string;
      transaction_id: string;
      amount_cents: number;
    }[];
    world.paidCallback = JSON.stringify({
      outTradeNo: payment!.out_trade_no,
      transactionId: payment!.transaction_id,
      amountCents: payment!.amount_cents,
      status: 'SUCCESS',
    });
  });

  /** Everything a case could have written: rows and their states, and this test's Redis keys. */
  async function snapshot(): Promise<unknown> {
    const rows = {
      sales: await countRows(world.db, 'SELECT COUNT(*) AS n FROM sales'),
      orders: await world.db.query('SELECT status, COUNT(*) AS n FROM orders GROUP BY status ORDER BY status'),
      payments: await world.db.query('SELECT status, transaction_id FROM payments ORDER BY id'),
    };
    const { redis: redisConfig, queue } = world.testEnv.config;
    const keys: string[] = [];
    for (const prefix of [redisConfig.keyPrefix, queue.prefix]) {
      // Rate-limit counters are the one thing a refused request is meant to write.
      keys.push(...(await scanKeys(world.redis, `${prefix}:*`)).filter((key) => !key.includes(':rl:')));
    }
    const stock = await world.redis.get(`${redisConfig.keyPrefix}:{sale:${world.saleId}}:stock`);
    return { rows, keys: keys.sort(), stock };
  }

  async function send({ method = 'POST', path, token, body, headers = {} }: Send): Promise<Answer> {
    const allHeaders: Record<string, string> = { ...headers };
    if (token !== undefined) allHeaders['authorization'] = `Bearer ${token}`;
    if (body !== undefined) allHeaders['content-type'] ??= 'application/json';
    const response = await request(`${world.stack.client.baseUrl}${path}`, {
      method: method as 'POST',
      headers: allHeaders,
      body,
    });
    const text = await response.body.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // kept as text: the assertion below then fails with it in view
    }
    return { status: response.statusCode, body: parsed, headers: response.headers };
  }

  const cases = [...purchaseBodyCases, ...routeBodyCases, ...accessCases, ...callbackCases, ...exposureCases];

  it('covers at least 60 cases', () => {
    expect(cases.length).toBeGreaterThanOrEqual(60);
  });

  const table = cases.map(([name, build, status, code]) => ({ name, build, status, code }));

  it.each(table)('$name → $status $code, x-request-id, nothing written', async ({ build, status, code }) => {
    const before = await snapshot();
    const answer = await send(build(world));
    expect({ status: answer.status, code: (answer.body as ErrorBody).error?.code }).toEqual({ status, code });
    expect(typeof (answer.body as ErrorBody).error?.message).toBe('string');
    expect(answer.headers['x-request-id']).toBeTruthy();
    expect(JSON.stringify(answer.body)).not.toMatch(/at .*\.(ts|js):\d+|RangeError|stack/i);
    expect(await snapshot()).toEqual(before);
  });

  it('a replayed callback is acknowledged and changes nothing', async () => {
    const before = await snapshot();
    const answer = await send(signed(world, world.paidCallback));
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ received: true, outcome: 'duplicate' });
    expect(answer.headers['x-request-id']).toBeTruthy();
    expect(await snapshot()).toEqual(before);
  });

  it('the bearer of METRICS_TOKEN reads /metrics', async () => {
    const answer = await send({ path: '/metrics', method: 'GET', token: world.metricsToken });
    expect(answer.status).toBe(200);
    expect(String(answer.body)).toContain('flash_sale_purchases_total');
  });

  it('security headers are on every answer', async () => {
    const answer = await send({ path: '/api/sales', method: 'GET' });
    expect(answer.headers['x-content-type-options']).toBe('nosniff');
    expect(answer.headers['content-security-policy']).toContain("default-src 'self'");
    expect(answer.headers['x-frame-options']).toBe('SAMEORIGIN');
  });
});
