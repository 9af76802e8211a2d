import { createRedisClient, type RedisClient } from '@flash-sale/redis';
import { JwtService } from '@nestjs/jwt';
import { request } from 'undici';
import type { DataSource } from 'typeorm';
import { signPaymentBody } from '../apps/api/src/payments/payment-signature';
import { countRows } from './support/fixtures';
import { startStack, type RunningStack } from './support/running-stack';
import { createTestEnv, openDatabase, type TestEnv } from './support/test-env';

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
 * URLs and headers. Each case answers API.md's status and code with the contract's body and an
 * `x-request-id`, and writes nothing: row counts and (non-rate-limit) Redis keys are the same after.
 */
describe('attack input (real API on MariaDB and Redis)', () => {
  let testEnv: TestEnv;
  let db: DataSource;
  let redis: RedisClient;
  let stack: RunningStack;
  let baseUrl: string;
  let admin: string;
  let buyer: { token: string; userId: string };
  let other: { token: string; userId: string };
  let saleId: string;
  let dbSaleId: string;
  let orderNo: string;
  let paidCallback: string;
  let jwtSecret: string;

  const hour = 3_600_000;
  const iso = (offsetMs: number) => new Date(Date.now() + offsetMs).toISOString();

  beforeAll(async () => {
    // No provider callbacks in this file: a late one would write while a case is being measured.
    testEnv = await createTestEnv({ PAYMENT_CALLBACK_COPIES: '0' });
    jwtSecret = testEnv.env['JWT_SECRET']!;
    db = await openDatabase(testEnv.config);
    redis = createRedisClient(testEnv.config.redis);
    stack = await startStack(testEnv.config, { worker: false });
    baseUrl = stack.client.baseUrl;
    admin = await stack.client.adminToken(testEnv.env['ADMIN_PASSWORD']!);
    buyer = await stack.client.guest('Buyer');
    other = await stack.client.guest('Other');
    const sale = (strategy: string) =>
      stack.client.call<{ id: string }>('POST', '/api/admin/sales', {
        token: admin,
        json: { name: 'Sale', priceCents: 100, stock: 5, endsAt: iso(hour), strategy },
      });
    saleId = (await sale('redis-lua')).body.id;
    dbSaleId = (await sale('db-optimistic')).body.id;
    // One written order of the buyer's, paid, so that order and callback routes have a real target.
    const bought = await stack.client.call<{ orderNo: string }>('POST', `/api/sales/${dbSaleId}/purchase`, {
      token: buyer.token,
      json: { token: await stack.client.submitToken(dbSaleId, buyer.token) },
    });
    expect(bought.status).toBe(201);
    orderNo = bought.body.orderNo;
    expect((await stack.client.call('POST', `/api/orders/${orderNo}/pay`, { token: buyer.token })).status).toBe(200);
    const [payment] = (await db.query('SELECT out_trade_no, transaction_id, amount_cents FROM payments')) as {
      out_trade_no: string;
      transaction_id: string;
      amount_cents: number;
    }[];
    paidCallback = JSON.stringify({
      outTradeNo: payment!.out_trade_no,
      transactionId: payment!.transaction_id,
      amountCents: payment!.amount_cents,
      status: 'SUCCESS',
    });
  });

  afterAll(async () => {
    await stack.close();
    redis.disconnect();
    await db.destroy();
    await testEnv.cleanup();
  });

  /** Everything a case could have written: rows and their states, and this test's Redis keys. */
  async function snapshot(): Promise<unknown> {
    const rows = {
      sales: await countRows(db, 'SELECT COUNT(*) AS n FROM sales'),
      orders: await db.query('SELECT status, COUNT(*) AS n FROM orders GROUP BY status ORDER BY status'),
      payments: await db.query('SELECT status, transaction_id FROM payments ORDER BY id'),
    };
    const keys: string[] = [];
    for (const prefix of [testEnv.config.redis.keyPrefix, testEnv.config.queue.prefix]) {
      const match = `${prefix}:*`.replace(/[{}[\]]/g, (c) => `\\${c}`);
      let cursor = '0';
      do {
        const [next, found] = await (redis as import('ioredis').Redis).scan(cursor, 'MATCH', match, 'COUNT', 1000);
        cursor = next;
        // Rate-limit counters are the one thing a refused request is meant to write.
        keys.push(...found.filter((key) => !key.includes(':rl:')));
      } while (cursor !== '0');
    }
    const stock = await redis.get(`${testEnv.config.redis.keyPrefix}:{sale:${saleId}}:stock`);
    return { rows, keys: keys.sort(), stock };
  }

  type Send = { method?: string; path: string; token?: string; body?: string; headers?: Record<string, string> };

  async function send({ method = 'POST', path, token, body, headers = {} }: Send): Promise<Answer> {
    const allHeaders: Record<string, string> = { ...headers };
    if (token !== undefined) allHeaders['authorization'] = `Bearer ${token}`;
    if (body !== undefined) allHeaders['content-type'] ??= 'application/json';
    const response = await request(`${baseUrl}${path}`, {
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

  const jwt = (payload: Record<string, unknown>, options: Record<string, unknown> = {}, secret = jwtSecret) =>
    new JwtService({ secret }).sign(payload, options);
  const nestedArrays = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;
  const nestedObjects = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
  const purchasePath = () => `/api/sales/${saleId}/purchase`;
  const validToken = 'abcdefgh12345678';
  const signed = (body: string, headers: Record<string, string> = {}) => ({
    path: '/api/payments/callback',
    body,
    headers: { 'x-payment-signature': signPaymentBody(body, testEnv.config.payment.webhookSecret), ...headers },
  });

  // [name, request, status, code] — the request is built lazily, once the setup above has run.
  const cases: [string, () => Send, number, string][] = [
    // --- bodies: nesting, prototype keys, size, encoding (purchase, guest, admin, sales, callback)
    [
      'purchase: 3,000-level nested arrays',
      () => ({ path: purchasePath(), token: buyer.token, body: `{"token":${nestedArrays(3000)}}` }),
      400,
      'VALIDATION_FAILED',
    ],
    [
      'purchase: 20-level nested objects',
      () => ({ path: purchasePath(), token: buyer.token, body: nestedObjects(20) }),
      400,
      'VALIDATION_FAILED',
    ],
    [
      'purchase: __proto__ key',
      () => ({
        path: purchasePath(),
        token: buyer.token,
        body: `{"token":"${validToken}","__proto__":{"isAdmin":true}}`,
      }),
      400,
      'VALIDATION_FAILED',
    ],
    [
      'purchase: constructor key',
      () => ({
        path: purchasePath(),
        token: buyer.token,
        body: `{"token":"${validToken}","constructor":{"prototype":{"x":1}}}`,
      }),
      400,
      'VALIDATION_FAILED',
    ],
    [
      'purchase: nested __proto__ key',
      () => ({
        path: purchasePath(),
        token: buyer.token,
        body: `{"token":"${validToken}","quantity":{"__proto__":1}}`,
      }),
      400,
      'VALIDATION_FAILED',
    ],
    [
      'purchase: body over the size limit',
      () => ({ path: purchasePath(), token: buyer.token, body: `{"token":"${'a'.repeat(70_000)}"}` }),
      413,
      'VALIDATION_FAILED',
    ],
    [
      'purchase: unicode token',
      () => ({ path: purchasePath(), token: buyer.token, body: JSON.stringify({ token: 'tökén-😀-ünïcode' }) }),
      400,
      'VALIDATION_FAILED',
    ],
    [
      'purchase: right-to-left override in the token',
      () => ({ path: purchasePath(), token: buyer.token, body: JSON.stringify({ token: 'abcdefgh\u202eabc' }) }),
      400,
      'VALIDATION_FAILED',
    ],
    [
      'purchase: token as array',
      () => ({ path: purchasePath(), token: buyer.token, body: `{"token":["${validToken}"]}` }),
      400,
      'VALIDATION_FAILED',
    ],
    [
      'purchase: token as object',
      () => ({ path: purchasePath(), token: buyer.token, body: `{"token":{"$ne":null}}` }),
      400,
      'VALIDATION_FAILED',
    ],
    [
      'purchase: empty token',
      () => ({ path: purchasePath(), token: buyer.token, body: '{"token":""}' }),
      400,
      'VALIDATION_FAILED',
    ],
    [
      'purchase: 10 KB token',
      () => ({ path: purchasePath(), token: buyer.token, body: JSON.stringify({ token: 'a'.repeat(10_000) }) }),
      400,
      'VALIDATION_FAILED',
    ],
    [
      'purchase: quantity 1e400 (Infinity)',
      () => ({ path: purchasePath(), token: buyer.token, body: `{"token":"${validToken}","quantity":1e400}` }),
      400,
      'VALIDATION_FAILED',
    ],
    [
      'purchase: quantity as boolean',
      () => ({ path: purchasePath(), token: buyer.token, body: `{"token":"${validToken}","quantity":true}` }),
      400,
      'VALIDATION_FAILED',
    ],
    [
      'purchase: body null',
      () => ({ path: purchasePath(), token: buyer.token, body: 'null' }),
      400,
      'VALIDATION_FAILED',
    ],
    [
      'purchase: body a string',
      () => ({ path: purchasePath(), token: buyer.token, body: '"token"' }),
      400,
      'VALIDATION_FAILED',
    ],
    [
      'purchase: body a number',
      () => ({ path: purchasePath(), token: buyer.token, body: '42' }),
      400,
      'VALIDATION_FAILED',
    ],
    [
      'purchase: byte-order mark before the JSON',
      () => ({ path: purchasePath(), token: buyer.token, body: `\ufeff{"token":"${validToken}"}` }),
      400,
      'VALIDATION_FAILED',
    ],
    [
      'purchase: form-encoded body',
      () => ({
        path: purchasePath(),
        token: buyer.token,
        body: `token=${validToken}`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      }),
      400,
      'VALIDATION_FAILED',
    ],
    [
      'purchase: multipart body',
      () => ({
        path: purchasePath(),
        token: buyer.token,
        body: '--x\r\n\r\n--x--',
        headers: { 'content-type': 'multipart/form-data; boundary=x' },
      }),
      400,
      'VALIDATION_FAILED',
    ],
    [
      'purchase: trailing garbage after the JSON',
      () => ({ path: purchasePath(), token: buyer.token, body: `{"token":"${validToken}"}}` }),
      400,
      'VALIDATION_FAILED',
    ],
    [
      'purchase: unknown sale id of 25 digits',
      () => ({
        path: '/api/sales/1234567890123456789012345/purchase',
        token: buyer.token,
        body: `{"token":"${validToken}"}`,
      }),
      404,
      'SALE_NOT_FOUND',
    ],
    [
      'purchase: sale id with SQL',
      () => ({
        path: `/api/sales/${encodeURIComponent("1' OR '1'='1")}/purchase`,
        token: buyer.token,
        body: `{"token":"${validToken}"}`,
      }),
      404,
      'SALE_NOT_FOUND',
    ],
    [
      'purchase: a forged token that looks right',
      () => ({ path: purchasePath(), token: buyer.token, body: `{"token":"${validToken}"}` }),
      403,
      'TOKEN_INVALID',
    ],
    [
      'guest: 3,000-level nested arrays (was a 500)',
      () => ({ path: '/api/auth/guest', body: `{"name":${nestedArrays(3000)}}` }),
      400,
      'VALIDATION_FAILED',
    ],
    [
      'guest: 3,000-level nested objects',
      () => ({ path: '/api/auth/guest', body: nestedObjects(3000) }),
      400,
      'VALIDATION_FAILED',
    ],
    [
      'guest: __proto__ key',
      () => ({ path: '/api/auth/guest', body: '{"__proto__":{"role":"admin"}}' }),
      400,
      'VALIDATION_FAILED',
    ],
    [
      'guest: constructor key',
      () => ({ path: '/api/auth/guest', body: '{"name":"x","constructor":{}}' }),
      400,
      'VALIDATION_FAILED',
    ],
    [
      'guest: role smuggled in',
      () => ({ path: '/api/auth/guest', body: '{"name":"x","role":"admin"}' }),
      400,
      'VALIDATION_FAILED',
    ],
    [
      'guest: name of 65 characters',
      () => ({ path: '/api/auth/guest', body: JSON.stringify({ name: 'n'.repeat(65) }) }),
      400,
      'VALIDATION_FAILED',
    ],
    [
      'guest: name of 65 emoji',
      () => ({ path: '/api/auth/guest', body: JSON.stringify({ name: '😀'.repeat(65) }) }),
      400,
      'VALIDATION_FAILED',
    ],
    ['guest: name as number', () => ({ path: '/api/auth/guest', body: '{"name":42}' }), 400, 'VALIDATION_FAILED'],
    [
      'guest: name as object',
      () => ({ path: '/api/auth/guest', body: '{"name":{"toString":"x"}}' }),
      400,
      'VALIDATION_FAILED',
    ],
    [
      'guest: body over the size limit',
      () => ({ path: '/api/auth/guest', body: JSON.stringify({ name: 'x'.repeat(100_000) }) }),
      413,
      'VALIDATION_FAILED',
    ],
    [
      'admin sign-in: wrong password',
      () => ({ path: '/api/auth/admin', body: '{"password":"guess"}' }),
      401,
      'INVALID_CREDENTIALS',
    ],
    [
      'admin sign-in: password as array',
      () => ({ path: '/api/auth/admin', body: '{"password":["a","b"]}' }),
      400,
      'VALIDATION_FAILED',
    ],
    [
      'admin sign-in: password as object',
      () => ({ path: '/api/auth/admin', body: '{"password":{"$gt":""}}' }),
      400,
      'VALIDATION_FAILED',
    ],
    ['admin sign-in: no password', () => ({ path: '/api/auth/admin', body: '{}' }), 400, 'VALIDATION_FAILED'],
    [
      'admin sign-in: __proto__ key',
      () => ({ path: '/api/auth/admin', body: '{"password":"x","__proto__":{}}' }),
      400,
      'VALIDATION_FAILED',
    ],
    [
      'admin sign-in: nested bomb',
      () => ({ path: '/api/auth/admin', body: `{"password":${nestedArrays(2000)}}` }),
      400,
      'VALIDATION_FAILED',
    ],
    [
      'create sale: price as string',
      () => ({
        path: '/api/admin/sales',
        token: admin,
        body: JSON.stringify({ name: 'S', priceCents: '100', stock: 5, endsAt: iso(hour) }),
      }),
      400,
      'VALIDATION_FAILED',
    ],
    [
      'create sale: stock 10^12',
      () => ({
        path: '/api/admin/sales',
        token: admin,
        body: JSON.stringify({ name: 'S', priceCents: 100, stock: 1e12, endsAt: iso(hour) }),
      }),
      400,
      'VALIDATION_FAILED',
    ],
    [
      'create sale: name of 10,000 characters',
      () => ({
        path: '/api/admin/sales',
        token: admin,
        body: JSON.stringify({ name: 'n'.repeat(10_000), priceCents: 100, stock: 5, endsAt: iso(hour) }),
      }),
      400,
      'VALIDATION_FAILED',
    ],
    [
      'create sale: endsAt in Arabic-Indic digits',
      () => ({
        path: '/api/admin/sales',
        token: admin,
        body: JSON.stringify({ name: 'S', priceCents: 100, stock: 5, endsAt: '٢٠٣٠-٠١-٠١T00:00:00Z' }),
      }),
      400,
      'VALIDATION_FAILED',
    ],
    [
      'create sale: javascript: image URL',
      () => ({
        path: '/api/admin/sales',
        token: admin,
        body: JSON.stringify({
          name: 'S',
          priceCents: 100,
          stock: 5,
          endsAt: iso(hour),
          imageUrl: 'javascript:alert(1)',
        }),
      }),
      400,
      'VALIDATION_FAILED',
    ],
    [
      'create sale: strategy as array',
      () => ({
        path: '/api/admin/sales',
        token: admin,
        body: JSON.stringify({ name: 'S', priceCents: 100, stock: 5, endsAt: iso(hour), strategy: ['redis-lua'] }),
      }),
      400,
      'VALIDATION_FAILED',
    ],
    [
      'create sale: __proto__ key',
      () => ({
        path: '/api/admin/sales',
        token: admin,
        body: `{"name":"S","priceCents":100,"stock":5,"endsAt":"${iso(hour)}","__proto__":{"stock":9}}`,
      }),
      400,
      'VALIDATION_FAILED',
    ],
    [
      'create sale: nested bomb',
      () => ({ path: '/api/admin/sales', token: admin, body: `{"name":${nestedArrays(3000)}}` }),
      400,
      'VALIDATION_FAILED',
    ],
    [
      'create sale: a guest',
      () => ({
        path: '/api/admin/sales',
        token: buyer.token,
        body: JSON.stringify({ name: 'S', priceCents: 100, stock: 5, endsAt: iso(hour) }),
      }),
      403,
      'FORBIDDEN',
    ],

    // --- access tokens
    [
      'JWT without exp',
      () => ({ path: '/api/orders', method: 'GET', token: jwt({ sub: buyer.userId, name: 'B', role: 'guest' }) }),
      401,
      'UNAUTHENTICATED',
    ],
    [
      'JWT without exp, admin role',
      () => ({ path: `/api/admin/sales/${saleId}/audit`, method: 'GET', token: jwt({ sub: 'admin', role: 'admin' }) }),
      401,
      'UNAUTHENTICATED',
    ],
    [
      'JWT expired',
      () => ({
        path: '/api/orders',
        method: 'GET',
        token: jwt({ sub: buyer.userId, role: 'guest', exp: Math.floor(Date.now() / 1000) - 10 }),
      }),
      401,
      'UNAUTHENTICATED',
    ],
    [
      'JWT not yet valid (nbf)',
      () => ({
        path: '/api/orders',
        method: 'GET',
        token: jwt({ sub: buyer.userId, role: 'guest' }, { expiresIn: 600, notBefore: 600 }),
      }),
      401,
      'UNAUTHENTICATED',
    ],
    [
      'JWT alg:none',
      () => ({
        path: '/api/orders',
        method: 'GET',
        token: `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${Buffer.from(JSON.stringify({ sub: buyer.userId, role: 'admin', exp: 9_999_999_999 })).toString('base64url')}.`,
      }),
      401,
      'UNAUTHENTICATED',
    ],
    [
      'JWT signed with another secret',
      () => ({
        path: '/api/orders',
        method: 'GET',
        token: jwt({ sub: buyer.userId, role: 'guest' }, { expiresIn: 600 }, 'not-the-secret'),
      }),
      401,
      'UNAUTHENTICATED',
    ],
    [
      'JWT signed with the repository development secret',
      () => ({
        path: `/api/admin/sales/${saleId}/audit`,
        method: 'GET',
        token: jwt({ sub: 'admin', role: 'admin' }, { expiresIn: 600 }, 'dev-only-jwt-secret-change-me'),
      }),
      401,
      'UNAUTHENTICATED',
    ],
    [
      'JWT HS512 with the right secret',
      () => ({
        path: '/api/orders',
        method: 'GET',
        token: jwt({ sub: buyer.userId, role: 'guest' }, { expiresIn: 600, algorithm: 'HS512' }),
      }),
      401,
      'UNAUTHENTICATED',
    ],
    [
      'JWT with an unknown role',
      () => ({
        path: '/api/orders',
        method: 'GET',
        token: jwt({ sub: buyer.userId, role: 'root' }, { expiresIn: 600 }),
      }),
      401,
      'UNAUTHENTICATED',
    ],
    [
      'JWT with a subject outside the id alphabet',
      () => ({ path: '/api/orders', method: 'GET', token: jwt({ sub: 'u|1 x', role: 'guest' }, { expiresIn: 600 }) }),
      401,
      'UNAUTHENTICATED',
    ],
    [
      'JWT payload tampered (role: admin)',
      () => {
        const [header, , signature] = buyer.token.split('.');
        const payload = Buffer.from(JSON.stringify({ sub: buyer.userId, role: 'admin', exp: 9_999_999_999 })).toString(
          'base64url',
        );
        return { path: `/api/admin/sales/${saleId}/audit`, method: 'GET', token: `${header}.${payload}.${signature}` };
      },
      401,
      'UNAUTHENTICATED',
    ],
    [
      'Bearer with an empty token',
      () => ({ path: '/api/orders', method: 'GET', headers: { authorization: 'Bearer ' } }),
      401,
      'UNAUTHENTICATED',
    ],
    [
      'Basic credentials',
      () => ({ path: '/api/orders', method: 'GET', headers: { authorization: 'Basic YWRtaW46YWRtaW4=' } }),
      401,
      'UNAUTHENTICATED',
    ],
    [
      'purchase without a token, bad body too (401 before 400)',
      () => ({ path: purchasePath(), body: nestedArrays(3000) }),
      401,
      'UNAUTHENTICATED',
    ],
    ['tokens without a token', () => ({ path: `/api/sales/${saleId}/tokens` }), 401, 'UNAUTHENTICATED'],
    [
      'tokens for an unknown sale',
      () => ({ path: '/api/sales/424242/tokens', token: buyer.token }),
      404,
      'SALE_NOT_FOUND',
    ],

    // --- orders: someone else's, unknown, admin on a guest's
    [
      'pay another user’s order',
      () => ({ path: `/api/orders/${orderNo}/pay`, token: other.token }),
      404,
      'ORDER_NOT_FOUND',
    ],
    [
      'cancel another user’s order',
      () => ({ path: `/api/orders/${orderNo}/cancel`, token: other.token }),
      404,
      'ORDER_NOT_FOUND',
    ],
    [
      'admin pays a guest’s order',
      () => ({ path: `/api/orders/${orderNo}/pay`, token: admin }),
      404,
      'ORDER_NOT_FOUND',
    ],
    [
      'admin cancels a guest’s order',
      () => ({ path: `/api/orders/${orderNo}/cancel`, token: admin }),
      404,
      'ORDER_NOT_FOUND',
    ],
    [
      'read another user’s order',
      () => ({ path: `/api/orders/${orderNo}`, method: 'GET', token: other.token }),
      404,
      'ORDER_NOT_FOUND',
    ],
    [
      'pay an order number that is not one',
      () => ({ path: `/api/orders/${encodeURIComponent('../../etc/passwd')}/pay`, token: buyer.token }),
      404,
      'ORDER_NOT_FOUND',
    ],
    [
      'cancel a made-up order number',
      () => ({ path: `/api/orders/S${dbSaleId}-01ZZZZZZZZZZZZZZZZZZZZZZZZ/cancel`, token: buyer.token }),
      404,
      'ORDER_NOT_FOUND',
    ],
    [
      'cancel a paid order',
      () => ({ path: `/api/orders/${orderNo}/cancel`, token: buyer.token }),
      409,
      'INVALID_TRANSITION',
    ],

    // --- payment callbacks: unsigned, tampered, replayed, malformed but signed
    ['callback unsigned', () => ({ path: '/api/payments/callback', body: paidCallback }), 401, 'INVALID_SIGNATURE'],
    [
      'callback signed with another secret',
      () => ({
        path: '/api/payments/callback',
        body: paidCallback,
        headers: { 'x-payment-signature': signPaymentBody(paidCallback, 'guess') },
      }),
      401,
      'INVALID_SIGNATURE',
    ],
    [
      'callback tampered after signing',
      () => {
        const request = signed(paidCallback);
        return { ...request, body: paidCallback.replace('"amountCents":', '"amountCents":1') };
      },
      401,
      'INVALID_SIGNATURE',
    ],
    [
      'callback signature in upper-case hex',
      () => {
        const request = signed(paidCallback);
        return {
          ...request,
          headers: { 'x-payment-signature': request.headers['x-payment-signature']!.toUpperCase() },
        };
      },
      401,
      'INVALID_SIGNATURE',
    ],
    [
      'callback signed, unknown payment',
      () =>
        signed(
          JSON.stringify({ outTradeNo: 'PAY-nothing', transactionId: 'txn_x', amountCents: 100, status: 'SUCCESS' }),
        ),
      404,
      'NOT_FOUND',
    ],
    [
      'callback signed, wrong amount',
      () => signed(paidCallback.replace(/"amountCents":\d+/, '"amountCents":1')),
      400,
      'VALIDATION_FAILED',
    ],
    [
      'callback signed, extra fields',
      () => signed(paidCallback.replace('{', '{"orderNo":"x",')),
      400,
      'VALIDATION_FAILED',
    ],
    [
      'callback signed, status FAILED',
      () => signed(paidCallback.replace('SUCCESS', 'FAILED')),
      400,
      'VALIDATION_FAILED',
    ],
    [
      'callback signed, __proto__ key',
      () => signed(paidCallback.replace('{', '{"__proto__":{"status":"SUCCESS"},')),
      400,
      'VALIDATION_FAILED',
    ],
    ['callback signed, nested bomb', () => signed(`{"outTradeNo":${nestedArrays(3000)}}`), 400, 'VALIDATION_FAILED'],

    // --- URLs and headers
    ['a 20 KB URL', () => ({ path: `/api/sales/${'9'.repeat(20_000)}`, method: 'GET' }), 431, 'VALIDATION_FAILED'],
    [
      'a 20 KB header',
      () => ({ path: '/api/sales', method: 'GET', headers: { 'x-junk': 'j'.repeat(20_000) } }),
      431,
      'VALIDATION_FAILED',
    ],
    ['a 90-digit sale id', () => ({ path: `/api/sales/${'1'.repeat(90)}`, method: 'GET' }), 404, 'SALE_NOT_FOUND'],
    [
      'a 1,000-character sale id (over the router’s parameter bound)',
      () => ({ path: `/api/sales/${'1'.repeat(1000)}`, method: 'GET' }),
      414,
      'VALIDATION_FAILED',
    ],
    ['an unknown route', () => ({ path: '/api/../../etc/passwd', method: 'GET' }), 404, 'NOT_FOUND'],
    ['an unsupported method', () => ({ path: '/api/sales', method: 'DELETE' }), 404, 'NOT_FOUND'],
    [
      'audit of an unknown sale',
      () => ({ path: '/api/admin/sales/777777/audit', method: 'GET', token: admin }),
      404,
      'SALE_NOT_FOUND',
    ],
  ];

  it('covers at least 60 cases', () => {
    expect(cases.length).toBeGreaterThanOrEqual(60);
  });

  const table = cases.map(([name, build, status, code]) => ({ name, build, status, code }));

  it.each(table)('$name → $status $code, x-request-id, nothing written', async ({ build, status, code }) => {
    const before = await snapshot();
    const answer = await send(build());
    expect({ status: answer.status, code: (answer.body as ErrorBody).error?.code }).toEqual({ status, code });
    expect(typeof (answer.body as ErrorBody).error?.message).toBe('string');
    expect(answer.headers['x-request-id']).toBeTruthy();
    expect(JSON.stringify(answer.body)).not.toMatch(/at .*\.(ts|js):\d+|RangeError|stack/i);
    expect(await snapshot()).toEqual(before);
  });

  it('a replayed callback is acknowledged and changes nothing', async () => {
    const before = await snapshot();
    const answer = await send(signed(paidCallback));
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ received: true, outcome: 'duplicate' });
    expect(answer.headers['x-request-id']).toBeTruthy();
    expect(await snapshot()).toEqual(before);
  });

  it('security headers are on every answer', async () => {
    const answer = await send({ path: '/api/sales', method: 'GET' });
    expect(answer.headers['x-content-type-options']).toBe('nosniff');
    expect(answer.headers['content-security-policy']).toContain("default-src 'self'");
    expect(answer.headers['x-frame-options']).toBe('SAMEORIGIN');
  });
});
