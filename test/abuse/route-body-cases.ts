import { type AttackCase, hour, iso, nestedArrays, nestedObjects } from './attack-world';

/** A body `path` must refuse as invalid: 400 VALIDATION_FAILED. */
const invalid = (name: string, path: string, body: string): AttackCase => [
  name,
  () => ({ path, body }),
  400,
  'VALIDATION_FAILED',
];

/** A valid sale's body with `fields` over it (its end time computed when sent). */
const saleBody = (fields: Record<string, unknown> = {}) =>
  JSON.stringify({ name: 'S', priceCents: 100, stock: 5, endsAt: iso(hour), ...fields });

/** A sale body the admin's `POST /api/admin/sales` must refuse as invalid. */
const invalidSale = (name: string, body: () => string): AttackCase => [
  name,
  (w) => ({ path: '/api/admin/sales', token: w.admin, body: body() }),
  400,
  'VALIDATION_FAILED',
];

/** The other routes' bodies: sign-ins and sale creation, with the same tricks as the purchase's. */
export const routeBodyCases: AttackCase[] = [
  invalid('guest: 3,000-level nested arrays (was a 500)', '/api/auth/guest', `{"name":${nestedArrays(3000)}}`),
  invalid('guest: 3,000-level nested objects', '/api/auth/guest', nestedObjects(3000)),
  invalid('guest: __proto__ key', '/api/auth/guest', '{"__proto__":{"role":"admin"}}'),
  invalid('guest: constructor key', '/api/auth/guest', '{"name":"x","constructor":{}}'),
  invalid('guest: role smuggled in', '/api/auth/guest', '{"name":"x","role":"admin"}'),
  invalid('guest: name of 65 characters', '/api/auth/guest', JSON.stringify({ name: 'n'.repeat(65) })),
  invalid('guest: name of 65 emoji', '/api/auth/guest', JSON.stringify({ name: '😀'.repeat(65) })),
  invalid('guest: name as number', '/api/auth/guest', '{"name":42}'),
  invalid('guest: name as object', '/api/auth/guest', '{"name":{"toString":"x"}}'),
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
  invalid('admin sign-in: password as array', '/api/auth/admin', '{"password":["a","b"]}'),
  invalid('admin sign-in: password as object', '/api/auth/admin', '{"password":{"$gt":""}}'),
  invalid('admin sign-in: no password', '/api/auth/admin', '{}'),
  invalid('admin sign-in: __proto__ key', '/api/auth/admin', '{"password":"x","__proto__":{}}'),
  invalid('admin sign-in: nested bomb', '/api/auth/admin', `{"password":${nestedArrays(2000)}}`),
  invalidSale('create sale: price as string', () => saleBody({ priceCents: '100' })),
  invalidSale('create sale: stock 10^12', () => saleBody({ stock: 1e12 })),
  invalidSale('create sale: name of 10,000 characters', () => saleBody({ name: 'n'.repeat(10_000) })),
  invalidSale('create sale: endsAt in Arabic-Indic digits', () => saleBody({ endsAt: '٢٠٣٠-٠١-٠١T00:00:00Z' })),
  invalidSale('create sale: javascript: image URL', () => saleBody({ imageUrl: 'javascript:alert(1)' })),
  invalidSale('create sale: strategy as array', () => saleBody({ strategy: ['redis-lua'] })),
  invalidSale(
    'create sale: __proto__ key',
    () => `{"name":"S","priceCents":100,"stock":5,"endsAt":"${iso(hour)}","__proto__":{"stock":9}}`,
  ),
  invalidSale('create sale: nested bomb', () => `{"name":${nestedArrays(3000)}}`),
  [
    'create sale: a guest',
    (w) => ({ path: '/api/admin/sales', token: w.buyer.token, body: saleBody() }),
    403,
    'FORBIDDEN',
  ],
];
