import { REQUEST_LIMITS } from '@flash-sale/contract';
import { type AttackCase, nestedArrays, nestedObjects, purchasePath, validToken } from './attack-world';

/** Purchase bodies: nesting, prototype keys, size, encoding, wrong types, odd ids, forged tokens. */
export const purchaseBodyCases: AttackCase[] = [
  // --- bodies: nesting, prototype keys, size, encoding (purchase, guest, admin, sales, callback)
  [
    'purchase: 3,000-level nested arrays',
    (w) => ({ path: purchasePath(w), token: w.buyer.token, body: `{"token":${nestedArrays(3000)}}` }),
    400,
    'VALIDATION_FAILED',
  ],
  [
    'purchase: 20-level nested objects',
    (w) => ({ path: purchasePath(w), token: w.buyer.token, body: nestedObjects(20) }),
    400,
    'VALIDATION_FAILED',
  ],
  [
    'purchase: __proto__ key',
    (w) => ({
      path: purchasePath(w),
      token: w.buyer.token,
      body: `{"token":"${validToken}","__proto__":{"isAdmin":true}}`,
    }),
    400,
    'VALIDATION_FAILED',
  ],
  [
    'purchase: constructor key',
    (w) => ({
      path: purchasePath(w),
      token: w.buyer.token,
      body: `{"token":"${validToken}","constructor":{"prototype":{"x":1}}}`,
    }),
    400,
    'VALIDATION_FAILED',
  ],
  [
    'purchase: nested __proto__ key',
    (w) => ({
      path: purchasePath(w),
      token: w.buyer.token,
      body: `{"token":"${validToken}","quantity":{"__proto__":1}}`,
    }),
    400,
    'VALIDATION_FAILED',
  ],
  [
    'purchase: body over the size limit',
    (w) => ({
      path: purchasePath(w),
      token: w.buyer.token,
      body: `{"token":"${'a'.repeat(REQUEST_LIMITS.maxBodyBytes)}"}`,
    }),
    413,
    'VALIDATION_FAILED',
  ],
  [
    'purchase: unicode token',
    (w) => ({ path: purchasePath(w), token: w.buyer.token, body: JSON.stringify({ token: 'tökén-😀-ünïcode' }) }),
    400,
    'VALIDATION_FAILED',
  ],
  [
    'purchase: right-to-left override in the token',
    (w) => ({ path: purchasePath(w), token: w.buyer.token, body: JSON.stringify({ token: 'abcdefgh\u202eabc' }) }),
    400,
    'VALIDATION_FAILED',
  ],
  [
    'purchase: token as array',
    (w) => ({ path: purchasePath(w), token: w.buyer.token, body: `{"token":["${validToken}"]}` }),
    400,
    'VALIDATION_FAILED',
  ],
  [
    'purchase: token as object',
    (w) => ({ path: purchasePath(w), token: w.buyer.token, body: `{"token":{"$ne":null}}` }),
    400,
    'VALIDATION_FAILED',
  ],
  [
    'purchase: empty token',
    (w) => ({ path: purchasePath(w), token: w.buyer.token, body: '{"token":""}' }),
    400,
    'VALIDATION_FAILED',
  ],
  [
    'purchase: 10 KB token',
    (w) => ({ path: purchasePath(w), token: w.buyer.token, body: JSON.stringify({ token: 'a'.repeat(10_000) }) }),
    400,
    'VALIDATION_FAILED',
  ],
  [
    'purchase: quantity 1e400 (Infinity)',
    (w) => ({ path: purchasePath(w), token: w.buyer.token, body: `{"token":"${validToken}","quantity":1e400}` }),
    400,
    'VALIDATION_FAILED',
  ],
  [
    'purchase: quantity as boolean',
    (w) => ({ path: purchasePath(w), token: w.buyer.token, body: `{"token":"${validToken}","quantity":true}` }),
    400,
    'VALIDATION_FAILED',
  ],
  [
    'purchase: body null',
    (w) => ({ path: purchasePath(w), token: w.buyer.token, body: 'null' }),
    400,
    'VALIDATION_FAILED',
  ],
  [
    'purchase: body a string',
    (w) => ({ path: purchasePath(w), token: w.buyer.token, body: '"token"' }),
    400,
    'VALIDATION_FAILED',
  ],
  [
    'purchase: body a number',
    (w) => ({ path: purchasePath(w), token: w.buyer.token, body: '42' }),
    400,
    'VALIDATION_FAILED',
  ],
  [
    'purchase: byte-order mark before the JSON',
    (w) => ({ path: purchasePath(w), token: w.buyer.token, body: `\ufeff{"token":"${validToken}"}` }),
    400,
    'VALIDATION_FAILED',
  ],
  [
    'purchase: form-encoded body',
    (w) => ({
      path: purchasePath(w),
      token: w.buyer.token,
      body: `token=${validToken}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    }),
    400,
    'VALIDATION_FAILED',
  ],
  [
    'purchase: multipart body',
    (w) => ({
      path: purchasePath(w),
      token: w.buyer.token,
      body: '--x\r\n\r\n--x--',
      headers: { 'content-type': 'multipart/form-data; boundary=x' },
    }),
    400,
    'VALIDATION_FAILED',
  ],
  [
    'purchase: trailing garbage after the JSON',
    (w) => ({ path: purchasePath(w), token: w.buyer.token, body: `{"token":"${validToken}"}}` }),
    400,
    'VALIDATION_FAILED',
  ],
  [
    'purchase: unknown sale id of 25 digits',
    (w) => ({
      path: '/api/sales/1234567890123456789012345/purchase',
      token: w.buyer.token,
      body: `{"token":"${validToken}"}`,
    }),
    404,
    'SALE_NOT_FOUND',
  ],
  [
    'purchase: sale id with SQL',
    (w) => ({
      path: `/api/sales/${encodeURIComponent("1' OR '1'='1")}/purchase`,
      token: w.buyer.token,
      body: `{"token":"${validToken}"}`,
    }),
    404,
    'SALE_NOT_FOUND',
  ],
  [
    'purchase: a forged token that looks right',
    (w) => ({ path: purchasePath(w), token: w.buyer.token, body: `{"token":"${validToken}"}` }),
    403,
    'TOKEN_INVALID',
  ],
];
