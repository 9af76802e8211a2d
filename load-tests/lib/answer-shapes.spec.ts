// How the k6 client reads a purchase answer (answer-shapes.ts): what docs/api.md says a strategy answers.
import { expectedPurchase, purchaseOutcome } from './answer-shapes.ts';

describe('a purchase answer, read against the contract', () => {
  const redisLua = expectedPurchase('redis-lua');
  const mysqlOnly = expectedPurchase('db-optimistic');

  it.each([
    ['a fresh reservation', 202, 'QUEUED', redisLua],
    ['a replay of a reservation the worker wrote since', 202, 'PENDING_PAYMENT', redisLua],
    ['a replay of an order paid since', 202, 'PAID', redisLua],
    ['a fresh MySQL order', 201, 'PENDING_PAYMENT', mysqlOnly],
    ['a replay of a MySQL order that expired since', 201, 'EXPIRED', mysqlOnly],
  ] as const)('%s is accepted', (_, status, orderStatus, expected) => {
    expect(purchaseOutcome({ status, body: { orderNo: 'S1-A', status: orderStatus } }, expected)).toEqual({
      kind: 'accepted',
      orderNo: 'S1-A',
      status,
    });
  });

  it.each([
    ['another status than the strategy answers', { status: 201, body: { orderNo: 'S1-A', status: 'QUEUED' } }],
    ['no order status', { status: 202, body: { orderNo: 'S1-A', status: 'SHIPPED' } }],
    ['no order number', { status: 202, body: { status: 'QUEUED' } }],
  ])('%s is a broken contract', (_, answer) => {
    expect(purchaseOutcome(answer, redisLua).kind).toBe('unexpected');
  });

  it('the refusals a flash sale gives are told apart, a retry with its wait', () => {
    const error = (code: string) => ({ error: { code, message: '' } });
    expect(purchaseOutcome({ status: 410, body: error('SOLD_OUT') }, redisLua).kind).toBe('sold_out');
    expect(purchaseOutcome({ status: 409, body: error('LIMIT_REACHED') }, redisLua).kind).toBe('limit_reached');
    expect(purchaseOutcome({ status: 503, body: error('UNAVAILABLE'), retryAfterSeconds: 2 }, redisLua)).toEqual({
      kind: 'retry_later',
      status: 503,
      code: 'UNAVAILABLE',
      retryAfterSeconds: 2,
    });
  });
});
