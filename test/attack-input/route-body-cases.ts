import { type AttackCase, hour, iso, nestedArrays, nestedObjects } from './attack-world';

/** The other routes' bodies: sign-ins and sale creation, with the same tricks as the purchase's. */
export const routeBodyCases: AttackCase[] = [
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
    (w) => ({
      path: '/api/admin/sales',
      token: w.admin,
      body: JSON.stringify({ name: 'S', priceCents: '100', stock: 5, endsAt: iso(hour) }),
    }),
    400,
    'VALIDATION_FAILED',
  ],
  [
    'create sale: stock 10^12',
    (w) => ({
      path: '/api/admin/sales',
      token: w.admin,
      body: JSON.stringify({ name: 'S', priceCents: 100, stock: 1e12, endsAt: iso(hour) }),
    }),
    400,
    'VALIDATION_FAILED',
  ],
  [
    'create sale: name of 10,000 characters',
    (w) => ({
      path: '/api/admin/sales',
      token: w.admin,
      body: JSON.stringify({ name: 'n'.repeat(10_000), priceCents: 100, stock: 5, endsAt: iso(hour) }),
    }),
    400,
    'VALIDATION_FAILED',
  ],
  [
    'create sale: endsAt in Arabic-Indic digits',
    (w) => ({
      path: '/api/admin/sales',
      token: w.admin,
      body: JSON.stringify({ name: 'S', priceCents: 100, stock: 5, endsAt: '٢٠٣٠-٠١-٠١T00:00:00Z' }),
    }),
    400,
    'VALIDATION_FAILED',
  ],
  [
    'create sale: javascript: image URL',
    (w) => ({
      path: '/api/admin/sales',
      token: w.admin,
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
    (w) => ({
      path: '/api/admin/sales',
      token: w.admin,
      body: JSON.stringify({ name: 'S', priceCents: 100, stock: 5, endsAt: iso(hour), strategy: ['redis-lua'] }),
    }),
    400,
    'VALIDATION_FAILED',
  ],
  [
    'create sale: __proto__ key',
    (w) => ({
      path: '/api/admin/sales',
      token: w.admin,
      body: `{"name":"S","priceCents":100,"stock":5,"endsAt":"${iso(hour)}","__proto__":{"stock":9}}`,
    }),
    400,
    'VALIDATION_FAILED',
  ],
  [
    'create sale: nested bomb',
    (w) => ({ path: '/api/admin/sales', token: w.admin, body: `{"name":${nestedArrays(3000)}}` }),
    400,
    'VALIDATION_FAILED',
  ],
  [
    'create sale: a guest',
    (w) => ({
      path: '/api/admin/sales',
      token: w.buyer.token,
      body: JSON.stringify({ name: 'S', priceCents: 100, stock: 5, endsAt: iso(hour) }),
    }),
    403,
    'FORBIDDEN',
  ],
];
