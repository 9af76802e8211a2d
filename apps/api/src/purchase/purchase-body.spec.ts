import { SALE_LIMITS } from '@flash-sale/contract';
import { DomainError, ErrorCode } from '@flash-sale/domain';
import { UnreadableBody } from '../common/request-body';
import { readPurchaseBody } from './purchase-body';

const TOKEN = 'eyJzIjoiMSJ9.c2lnbmF0dXJl-_';

/** Bodies a client might send: valid ones, and every way of getting a field wrong. */
const BODIES: Record<string, unknown>[] = [
  { token: TOKEN },
  { token: TOKEN, quantity: 1 },
  { token: TOKEN, quantity: 20 },
  { token: TOKEN, quantity: undefined },
  { token: 'abcdefgh' },
  { token: 'a'.repeat(255) },
  {},
  { quantity: 1 },
  { token: 42 },
  { token: null },
  { token: ['abcdefgh'] },
  { token: {} },
  { token: 'short' },
  { token: 'a'.repeat(256) },
  { token: 'abc defgh' },
  { token: 'abc\ndefgh' },
  { token: TOKEN, quantity: 0 },
  { token: TOKEN, quantity: -1 },
  { token: TOKEN, quantity: 21 },
  { token: TOKEN, quantity: 1.5 },
  { token: TOKEN, quantity: '1' },
  { token: TOKEN, quantity: null },
  { token: TOKEN, quantity: true },
  { token: TOKEN, quantity: [1] },
  { token: TOKEN, quantity: Number.NaN },
  { token: TOKEN, quantity: Number.POSITIVE_INFINITY },
  { token: TOKEN, quantity: 1e9 },
  { token: TOKEN, quantity: Number.MAX_SAFE_INTEGER + 2 },
  { token: TOKEN, coupon: 'FREE' },
  { token: TOKEN, quantity: 1, extra: 1 },
  JSON.parse(`{"token":"${TOKEN}","__proto__":{"quantity":1}}`) as Record<string, unknown>,
  { token: TOKEN, constructor: 1 },
];

/** docs/api.md's rule, written out independently of the schema: `token`, at most `quantity`, nothing else. */
function contractAccepts(body: Record<string, unknown>): boolean {
  const keys = Object.keys(body).filter((key) => body[key] !== undefined);
  if (keys.some((key) => key !== 'token' && key !== 'quantity')) return false;
  const { token, quantity } = body;
  const tokenOk = typeof token === 'string' && /^[A-Za-z0-9_.-]{8,255}$/.test(token);
  const quantityOk =
    quantity === undefined ||
    (typeof quantity === 'number' &&
      Number.isInteger(quantity) &&
      quantity >= 1 &&
      quantity <= SALE_LIMITS.maxQuantity);
  return tokenOk && quantityOk;
}

function refusalOf(body: unknown): DomainError {
  try {
    readPurchaseBody(body);
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error(`accepted ${JSON.stringify(body)}`);
}

describe('the purchase body', () => {
  it.each(BODIES.map((body) => [JSON.stringify(body), body] as const))(
    '%s: accepted exactly when the contract accepts it, with the quantity defaulted to 1',
    (_name, body) => {
      if (contractAccepts(body)) {
        expect(readPurchaseBody(body)).toEqual({ token: body.token, quantity: body.quantity ?? 1 });
      } else {
        const error = refusalOf(body);
        expect(error.code).toBe(ErrorCode.ValidationFailed);
        expect(error.message).not.toBe('');
      }
    },
  );

  it('names each wrong field, and every one of them', () => {
    expect(refusalOf({}).message).toBe('token must be a submit token from POST /api/sales/:id/tokens');
    expect(refusalOf({ token: TOKEN, quantity: 0 }).message).toBe(
      `quantity must be an integer from 1 to ${SALE_LIMITS.maxQuantity}`,
    );
    expect(refusalOf({ token: TOKEN, coupon: 'FREE' }).message).toBe('property coupon should not exist');
    const several = refusalOf({ token: 'short', quantity: '2', extra: true });
    expect(several.details).toEqual({
      problems: [
        'property extra should not exist',
        'token must be a submit token from POST /api/sales/:id/tokens',
        `quantity must be an integer from 1 to ${SALE_LIMITS.maxQuantity}`,
      ].sort((a, b) => several.message.indexOf(a) - several.message.indexOf(b)),
    });
    expect((several.details as { problems: string[] }).problems).toHaveLength(3);
  });

  it('reads an absent body as {} and refuses what is not an object or could not be read', () => {
    expect(refusalOf(undefined).message).toBe('token must be a submit token from POST /api/sales/:id/tokens');
    for (const body of [null, [], 'token', 42, [{ token: TOKEN }]]) {
      expect(refusalOf(body).message).toBe('The request body must be a JSON object');
    }
    expect(refusalOf(new UnreadableBody('The request body is not valid JSON')).message).toBe(
      'The request body is not valid JSON',
    );
  });
});
