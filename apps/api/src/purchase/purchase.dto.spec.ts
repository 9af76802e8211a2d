import 'reflect-metadata';
import { DomainError, ErrorCode } from '@flash-sale/domain';
import { plainToInstance } from 'class-transformer';
import { validate } from 'class-validator';
import { createValidationPipe } from '../common/validation';
import { PurchaseDto } from './purchase.dto';

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

/** What class-validator alone says, with the global pipe's options. */
async function classValidatorAccepts(body: Record<string, unknown>): Promise<boolean> {
  const errors = await validate(plainToInstance(PurchaseDto, body), {
    whitelist: true,
    forbidNonWhitelisted: true,
    forbidUnknownValues: true,
  });
  return errors.length === 0;
}

describe('PurchaseDto hand check', () => {
  it.each(BODIES.map((body) => [JSON.stringify(body), body] as const))(
    'accepts %s only if class-validator does, with the same fields',
    async (_name, body) => {
      const fast = PurchaseDto.readIfValid(body);
      const accepted = await classValidatorAccepts(body);
      if (fast !== undefined) {
        expect(accepted).toBe(true);
        expect(fast).toBeInstanceOf(PurchaseDto);
        expect({ token: fast.token, quantity: fast.quantity }).toEqual({ token: body.token, quantity: body.quantity });
      } else if (accepted) {
        // Only odd keys class-transformer ignores are left to the slow path; plain valid bodies never are.
        expect(Object.keys(body).some((key) => key !== 'token' && key !== 'quantity')).toBe(true);
      }
    },
  );

  it('the global pipe answers the same through the hand check as through class-validator', async () => {
    const pipe = createValidationPipe();
    const metadata = { type: 'body', metatype: PurchaseDto, data: undefined } as const;
    for (const body of BODIES) {
      const outcome = await pipe.transform(body, metadata).then(
        (dto: PurchaseDto) => ({ token: dto.token, quantity: dto.quantity }),
        (error: unknown) => (error instanceof DomainError ? error.code : error),
      );
      if (await classValidatorAccepts(body)) {
        expect(outcome).toEqual({ token: body.token, quantity: body.quantity });
      } else {
        expect(outcome).toBe(ErrorCode.ValidationFailed);
      }
    }
  });
});
