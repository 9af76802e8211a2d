import { JwtService } from '@nestjs/jwt';
import { SubmitTokenCodec } from '../../apps/api/src/purchase/submit-token-codec';
import { countRows } from '../support/fixtures';
import { useStackWorld } from '../support/stack-world';

interface ErrorBody {
  error: { code: string; message: string };
}

/** Every bad input of docs/api.md gets its status and code, carries x-request-id, and writes nothing. */
describe('bad input (real API on MariaDB and Redis)', () => {
  // No worker: nothing here may reach the queue, and a stray job would show up as a reservation.
  const w = useStackWorld({ worker: false, database: true, saleRedis: true });
  let saleId: string;
  let buyer: { token: string; userId: string };

  const hour = 3_600_000;
  const iso = (offsetMs: number) => new Date(Date.now() + offsetMs).toISOString();

  beforeAll(async () => {
    saleId = (await w.client.createSale(w.admin, { stock: 5 })).id;
    buyer = await w.client.guest('Buyer');
  });

  const purchase = (options: {
    sale?: string;
    token?: string;
    json?: unknown;
    rawBody?: string;
    headers?: Record<string, string>;
  }) =>
    w.stack.client.call<ErrorBody>('POST', `/api/sales/${options.sale ?? saleId}/purchase`, {
      token: options.token ?? buyer.token,
      json: options.json,
      rawBody: options.rawBody,
      headers: options.headers,
    });

  async function expectError(
    responsePromise: Promise<{ status: number; body: unknown; headers: Record<string, unknown> }>,
    status: number,
    code: string,
  ) {
    const response = await responsePromise;
    expect({ status: response.status, code: (response.body as ErrorBody).error?.code }).toEqual({ status, code });
    expect(typeof (response.body as ErrorBody).error.message).toBe('string');
    expect(response.headers['x-request-id']).toBeTruthy();
    expect(JSON.stringify(response.body)).not.toMatch(/at .*\.(ts|js):\d+/); // never a w.stack trace
  }

  /** Nothing was written: Redis stock untouched, no reservation, no order row. */
  async function expectNothingWritten(sale = saleId, stock = 5) {
    expect(Number(await w.redis.get(w.keys.sale(sale).stock))).toBe(stock);
    expect(await w.redis.hlen(w.keys.sale(sale).reservations)).toBe(0);
    expect(await countRows(w.db, 'SELECT COUNT(*) AS n FROM orders')).toBe(0);
  }

  it('malformed JSON, wrong content type, missing and unknown fields → 400 VALIDATION_FAILED', async () => {
    const token = await w.stack.client.submitToken(saleId, buyer.token);
    await expectError(purchase({ rawBody: '{"token": "abc' }), 400, 'VALIDATION_FAILED');
    await expectError(
      purchase({ rawBody: 'token=abc', headers: { 'content-type': 'text/plain' } }),
      400,
      'VALIDATION_FAILED',
    );
    await expectError(purchase({}), 400, 'VALIDATION_FAILED');
    await expectError(purchase({ json: {} }), 400, 'VALIDATION_FAILED');
    await expectError(purchase({ json: [] }), 400, 'VALIDATION_FAILED');
    await expectError(purchase({ json: { token, coupon: 'FREE' } }), 400, 'VALIDATION_FAILED');
    await expectError(purchase({ json: { token: 42 } }), 400, 'VALIDATION_FAILED');
    await expectNothingWritten();
  });

  it('negative, zero, fractional, textual and huge quantities → 400 VALIDATION_FAILED', async () => {
    const token = await w.stack.client.submitToken(saleId, buyer.token);
    for (const quantity of [-1, 0, 1.5, '1', 1e9, Number.MAX_SAFE_INTEGER + 2, null]) {
      await expectError(purchase({ json: { token, quantity } }), 400, 'VALIDATION_FAILED');
    }
    await expectNothingWritten();
  });

  it('unknown sale → 404 SALE_NOT_FOUND, after validation', async () => {
    const token = await w.stack.client.submitToken(saleId, buyer.token);
    await expectError(purchase({ sale: '999999', json: { token } }), 404, 'SALE_NOT_FOUND');
    await expectError(purchase({ sale: 'not-a-number', json: { token } }), 404, 'SALE_NOT_FOUND');
    await expectError(w.stack.client.call('GET', '/api/sales/999999'), 404, 'SALE_NOT_FOUND');
    await expectError(
      w.stack.client.call('POST', '/api/sales/999999/tokens', { token: buyer.token }),
      404,
      'SALE_NOT_FOUND',
    );
    // Both wrong: docs/api.md answers 400 before 404.
    await expectError(purchase({ sale: '999999', json: { token, quantity: 0 } }), 400, 'VALIDATION_FAILED');
    await expectNothingWritten();
  });

  it('expired, unknown, another user’s and another sale’s token → 403 TOKEN_INVALID', async () => {
    const otherSale = (await w.stack.client.createSale(w.admin, { stock: 5 })).id;
    // Expired: past the time its signed claims give, when its Redis copy expired too. (A token still
    // within its time but unknown to Redis is adopted instead: see outage-sequences.int.spec.ts.)
    const codec = new SubmitTokenCodec(w.testEnv.config.auth.jwtSecret);
    const expired = codec.encode(SubmitTokenCodec.claims(saleId, buyer.userId, Date.now() - 1_000));
    await expectError(purchase({ json: { token: expired } }), 403, 'TOKEN_INVALID');
    await expectError(purchase({ json: { token: 'neverIssuedToken123' } }), 403, 'TOKEN_INVALID');

    const someoneElse = await w.stack.client.guest();
    const foreign = await w.stack.client.submitToken(saleId, someoneElse.token);
    await expectError(purchase({ json: { token: foreign } }), 403, 'TOKEN_INVALID');
    const forOtherSale = await w.stack.client.submitToken(otherSale, buyer.token);
    await expectError(purchase({ json: { token: forOtherSale } }), 403, 'TOKEN_INVALID');
    await expectNothingWritten();
    await expectNothingWritten(otherSale);
    // The refusals consumed nothing: the rightful owner can still use the foreign token.
    expect((await purchase({ token: someoneElse.token, json: { token: foreign } })).status).toBe(202);
    await w.redis.del(w.keys.sale(saleId).reservations); // keep expectNothingWritten meaningful for later tests
    await w.redis.set(w.keys.sale(saleId).stock, 5);
  });

  it('missing, garbage, forged and unsigned JWTs → 401 UNAUTHENTICATED; a guest on an admin route → 403', async () => {
    const body = { json: { token: 'whateverToken1' } };
    const forged = await new JwtService({ secret: 'not-the-server-secret' }).signAsync({
      sub: buyer.userId,
      role: 'admin',
    });
    const unsigned = `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${Buffer.from(
      JSON.stringify({ sub: buyer.userId, role: 'admin' }),
    ).toString('base64url')}.`;
    await expectError(w.stack.client.call('POST', `/api/sales/${saleId}/purchase`, body), 401, 'UNAUTHENTICATED');
    for (const token of ['garbage', forged, unsigned]) {
      await expectError(purchase({ token, ...body }), 401, 'UNAUTHENTICATED');
      await expectError(w.stack.client.call('GET', '/api/orders', { token }), 401, 'UNAUTHENTICATED');
    }
    // 401 comes before 400.
    await expectError(
      w.stack.client.call('POST', `/api/sales/${saleId}/purchase`, { rawBody: '{' }),
      401,
      'UNAUTHENTICATED',
    );
    await expectError(w.stack.client.call('GET', `/api/admin/sales/${saleId}/audit`), 401, 'UNAUTHENTICATED');
    await expectError(
      w.stack.client.call('GET', `/api/admin/sales/${saleId}/audit`, { token: buyer.token }),
      403,
      'FORBIDDEN',
    );
    await expectError(
      w.stack.client.call('POST', '/api/admin/sales', { token: forged, json: {} }),
      401,
      'UNAUTHENTICATED',
    );
    await expectError(
      w.stack.client.call('POST', '/api/auth/admin', { json: { password: 'wrong' } }),
      401,
      'INVALID_CREDENTIALS',
    );
    await expectNothingWritten();
  });

  it('invalid sales are refused with 400 and not created', async () => {
    const before = await countRows(w.db, 'SELECT COUNT(*) AS n FROM sales');
    const invalid = [
      { stock: 0 },
      { stock: -5 },
      { priceCents: 1.5 },
      { endsAt: 'tomorrow' },
      { startsAt: iso(2 * hour), endsAt: iso(hour) },
      { strategy: 'yolo' },
      { perUserLimit: 0 },
      { name: '' },
      { surprise: true },
    ];
    for (const change of invalid) {
      await expectError(
        w.stack.client.call('POST', '/api/admin/sales', {
          token: w.admin,
          json: { name: 'Sale', priceCents: 100, stock: 5, endsAt: iso(hour), ...change },
        }),
        400,
        'VALIDATION_FAILED',
      );
    }
    expect(await countRows(w.db, 'SELECT COUNT(*) AS n FROM sales')).toBe(before);
  });

  it('not started → 409 SALE_NOT_STARTED; ended → 410 SALE_ENDED; limit → 409; sold out → 410', async () => {
    const upcoming = (
      await w.stack.client.createSale(w.admin, { stock: 5, startsAt: iso(hour), endsAt: iso(2 * hour) })
    ).id;
    await expectError(
      purchase({ sale: upcoming, json: { token: await w.stack.client.submitToken(upcoming, buyer.token) } }),
      409,
      'SALE_NOT_STARTED',
    );
    const ended = (await w.stack.client.createSale(w.admin, { stock: 5, startsAt: iso(-2 * hour), endsAt: iso(-hour) }))
      .id;
    await expectError(
      w.stack.client.call('POST', `/api/sales/${ended}/tokens`, { token: buyer.token }),
      410,
      'SALE_ENDED',
    );

    const single = (await w.stack.client.createSale(w.admin, { stock: 1 })).id;
    const first = await w.stack.client.guest();
    expect(
      (
        await purchase({
          sale: single,
          token: first.token,
          json: { token: await w.stack.client.submitToken(single, first.token) },
        })
      ).status,
    ).toBe(202);
    await expectError(
      purchase({
        sale: single,
        token: first.token,
        json: { token: await w.stack.client.submitToken(single, first.token) },
      }),
      409,
      'LIMIT_REACHED',
    );
    const second = await w.stack.client.guest();
    const secondToken = await w.stack.client.submitToken(single, second.token);
    await expectError(purchase({ sale: single, token: second.token, json: { token: secondToken } }), 410, 'SOLD_OUT');
    // A repeat gets the same refusal: the token was not consumed.
    await expectError(purchase({ sale: single, token: second.token, json: { token: secondToken } }), 410, 'SOLD_OUT');
  });

  it('echoes x-request-id, and mints one when none (or a malformed one) is given', async () => {
    const echoed = await w.stack.client.call('GET', '/api/sales', { headers: { 'x-request-id': 'trace-123' } });
    expect(echoed.headers['x-request-id']).toBe('trace-123');
    const minted = await w.stack.client.call('GET', '/api/sales', {
      headers: { 'x-request-id': 'bad id with spaces' },
    });
    expect(minted.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const onError = await w.stack.client.call('GET', '/api/nowhere', { headers: { 'x-request-id': 'trace-404' } });
    expect(onError.status).toBe(404);
    expect(onError.headers['x-request-id']).toBe('trace-404');
  });
});
