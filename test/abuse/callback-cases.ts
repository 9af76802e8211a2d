import { signPaymentBody } from '../../apps/api/src/payments/payment-signature';
import { type AttackCase, nestedArrays, signed } from './attack-world';

/** Payment callbacks (unsigned, tampered, malformed but signed), oversize URLs and headers. */
export const callbackCases: AttackCase[] = [
  // --- payment callbacks: unsigned, tampered, replayed, malformed but signed
  ['callback unsigned', (w) => ({ path: '/api/payments/callback', body: w.paidCallback }), 401, 'INVALID_SIGNATURE'],
  [
    'callback signed with another secret',
    (w) => ({
      path: '/api/payments/callback',
      body: w.paidCallback,
      headers: { 'x-payment-signature': signPaymentBody(w.paidCallback, 'guess') },
    }),
    401,
    'INVALID_SIGNATURE',
  ],
  [
    'callback tampered after signing',
    (w) => {
      const request = signed(w, w.paidCallback);
      return { ...request, body: w.paidCallback.replace('"amountCents":', '"amountCents":1') };
    },
    401,
    'INVALID_SIGNATURE',
  ],
  [
    'callback signature in upper-case hex',
    (w) => {
      const request = signed(w, w.paidCallback);
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
    (w) =>
      signed(
        w,
        JSON.stringify({ outTradeNo: 'PAY-nothing', transactionId: 'txn_x', amountCents: 100, status: 'SUCCESS' }),
      ),
    404,
    'NOT_FOUND',
  ],
  [
    'callback signed, wrong amount',
    (w) => signed(w, w.paidCallback.replace(/"amountCents":\d+/, '"amountCents":1')),
    400,
    'VALIDATION_FAILED',
  ],
  [
    'callback signed, extra fields',
    (w) => signed(w, w.paidCallback.replace('{', '{"orderNo":"x",')),
    400,
    'VALIDATION_FAILED',
  ],
  [
    'callback signed, status FAILED',
    (w) => signed(w, w.paidCallback.replace('SUCCESS', 'FAILED')),
    400,
    'VALIDATION_FAILED',
  ],
  [
    'callback signed, __proto__ key',
    (w) => signed(w, w.paidCallback.replace('{', '{"__proto__":{"status":"SUCCESS"},')),
    400,
    'VALIDATION_FAILED',
  ],
  ['callback signed, nested bomb', (w) => signed(w, `{"outTradeNo":${nestedArrays(3000)}}`), 400, 'VALIDATION_FAILED'],

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
    (w) => ({ path: '/api/admin/sales/777777/audit', method: 'GET', token: w.admin }),
    404,
    'SALE_NOT_FOUND',
  ],
];
