import { type AttackCase, jwt, nestedArrays, purchasePath } from './attack-world';

/** Access tokens (forged, expired, unsigned, exp-less JWTs) and other people's orders. */
export const accessCases: AttackCase[] = [
  // --- access tokens
  [
    'JWT without exp',
    (w) => ({ path: '/api/orders', method: 'GET', token: jwt(w, { sub: w.buyer.userId, name: 'B', role: 'guest' }) }),
    401,
    'UNAUTHENTICATED',
  ],
  [
    'JWT without exp, admin role',
    (w) => ({
      path: `/api/admin/sales/${w.saleId}/audit`,
      method: 'GET',
      token: jwt(w, { sub: 'admin', role: 'admin' }),
    }),
    401,
    'UNAUTHENTICATED',
  ],
  [
    'JWT expired',
    (w) => ({
      path: '/api/orders',
      method: 'GET',
      token: jwt(w, { sub: w.buyer.userId, role: 'guest', exp: Math.floor(Date.now() / 1000) - 10 }),
    }),
    401,
    'UNAUTHENTICATED',
  ],
  [
    'JWT not yet valid (nbf)',
    (w) => ({
      path: '/api/orders',
      method: 'GET',
      token: jwt(w, { sub: w.buyer.userId, role: 'guest' }, { expiresIn: 600, notBefore: 600 }),
    }),
    401,
    'UNAUTHENTICATED',
  ],
  [
    'JWT alg:none',
    (w) => ({
      path: '/api/orders',
      method: 'GET',
      token: `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${Buffer.from(JSON.stringify({ sub: w.buyer.userId, role: 'admin', exp: 9_999_999_999 })).toString('base64url')}.`,
    }),
    401,
    'UNAUTHENTICATED',
  ],
  [
    'JWT signed with another secret',
    (w) => ({
      path: '/api/orders',
      method: 'GET',
      token: jwt(w, { sub: w.buyer.userId, role: 'guest' }, { expiresIn: 600 }, 'not-the-secret'),
    }),
    401,
    'UNAUTHENTICATED',
  ],
  [
    'JWT signed with the repository development secret',
    (w) => ({
      path: `/api/admin/sales/${w.saleId}/audit`,
      method: 'GET',
      token: jwt(w, { sub: 'admin', role: 'admin' }, { expiresIn: 600 }, 'dev-only-jwt-secret-change-me'),
    }),
    401,
    'UNAUTHENTICATED',
  ],
  [
    'JWT HS512 with the right secret',
    (w) => ({
      path: '/api/orders',
      method: 'GET',
      token: jwt(w, { sub: w.buyer.userId, role: 'guest' }, { expiresIn: 600, algorithm: 'HS512' }),
    }),
    401,
    'UNAUTHENTICATED',
  ],
  [
    'JWT with an unknown role',
    (w) => ({
      path: '/api/orders',
      method: 'GET',
      token: jwt(w, { sub: w.buyer.userId, role: 'root' }, { expiresIn: 600 }),
    }),
    401,
    'UNAUTHENTICATED',
  ],
  [
    'JWT with a subject outside the id alphabet',
    (w) => ({ path: '/api/orders', method: 'GET', token: jwt(w, { sub: 'u|1 x', role: 'guest' }, { expiresIn: 600 }) }),
    401,
    'UNAUTHENTICATED',
  ],
  [
    'JWT payload tampered (role: admin)',
    (w) => {
      const [header, , signature] = w.buyer.token.split('.');
      const payload = Buffer.from(JSON.stringify({ sub: w.buyer.userId, role: 'admin', exp: 9_999_999_999 })).toString(
        'base64url',
      );
      return { path: `/api/admin/sales/${w.saleId}/audit`, method: 'GET', token: `${header}.${payload}.${signature}` };
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
    (w) => ({ path: purchasePath(w), body: nestedArrays(3000) }),
    401,
    'UNAUTHENTICATED',
  ],
  ['tokens without a token', (w) => ({ path: `/api/sales/${w.saleId}/tokens` }), 401, 'UNAUTHENTICATED'],
  [
    'tokens for an unknown sale',
    (w) => ({ path: '/api/sales/424242/tokens', token: w.buyer.token }),
    404,
    'SALE_NOT_FOUND',
  ],

  // --- orders: someone else's, unknown, admin on a guest's
  [
    'pay another user’s order',
    (w) => ({ path: `/api/orders/${w.orderNo}/pay`, token: w.other.token }),
    404,
    'ORDER_NOT_FOUND',
  ],
  [
    'cancel another user’s order',
    (w) => ({ path: `/api/orders/${w.orderNo}/cancel`, token: w.other.token }),
    404,
    'ORDER_NOT_FOUND',
  ],
  [
    'admin pays a guest’s order',
    (w) => ({ path: `/api/orders/${w.orderNo}/pay`, token: w.admin }),
    404,
    'ORDER_NOT_FOUND',
  ],
  [
    'admin cancels a guest’s order',
    (w) => ({ path: `/api/orders/${w.orderNo}/cancel`, token: w.admin }),
    404,
    'ORDER_NOT_FOUND',
  ],
  [
    'read another user’s order',
    (w) => ({ path: `/api/orders/${w.orderNo}`, method: 'GET', token: w.other.token }),
    404,
    'ORDER_NOT_FOUND',
  ],
  [
    'pay an order number that is not one',
    (w) => ({ path: `/api/orders/${encodeURIComponent('../../etc/passwd')}/pay`, token: w.buyer.token }),
    404,
    'ORDER_NOT_FOUND',
  ],
  [
    'cancel a made-up order number',
    (w) => ({ path: `/api/orders/S${w.dbSaleId}-01ZZZZZZZZZZZZZZZZZZZZZZZZ/cancel`, token: w.buyer.token }),
    404,
    'ORDER_NOT_FOUND',
  ],
  [
    'cancel a paid order',
    (w) => ({ path: `/api/orders/${w.orderNo}/cancel`, token: w.buyer.token }),
    409,
    'INVALID_TRANSITION',
  ],
];
