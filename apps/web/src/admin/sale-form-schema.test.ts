import { SALE_LIMITS, WAITING_ROOM_LIMITS } from '@flash-sale/contract';
import {
  defaultSaleFormValues,
  localDateTimeToIso,
  parsePriceCents,
  saleFormSchema,
  type SaleFormValues,
  toLocalDateTime,
  type WaitingRoomFormValues,
  waitingRoomFormValues,
  waitingRoomSchema,
} from './sale-form-schema';
import { makeCreateSaleRequest } from './test-fixtures';

const valid: SaleFormValues = {
  name: '  Trail sneakers ',
  description: '',
  imageUrl: '',
  price: '49.99',
  stock: '100',
  perUserLimit: '2',
  startsAt: '2030-01-15T10:00',
  endsAt: '2030-01-15T12:00',
  strategy: 'redis-lua',
  paymentTimeoutSeconds: '600',
  buckets: '1',
  waitingRoom: { enabled: false, admitPerSecond: '', maxShopping: '', passSeconds: '' },
};

/** The first message per field, as react-hook-form shows them. */
function errorsOf(values: Partial<SaleFormValues>): Record<string, string> {
  const result = saleFormSchema.safeParse({ ...valid, ...values });
  if (result.success) return {};
  const errors: Record<string, string> = {};
  for (const issue of result.error.issues) errors[String(issue.path[0])] ??= issue.message;
  return errors;
}

describe('parsePriceCents', () => {
  it('turns dollars into integer cents without floating-point drift', () => {
    expect(parsePriceCents('49.99')).toBe(4_999);
    expect(parsePriceCents('0.29')).toBe(29); // 0.29 * 100 === 28.999999999999996
    expect(parsePriceCents('1.5')).toBe(150);
    expect(parsePriceCents('12')).toBe(1_200);
    expect(parsePriceCents(' 0 ')).toBe(0);
  });

  it('refuses what is not an amount in dollars and cents', () => {
    for (const text of ['', '-1', '1.999', '1,50', '$5', 'abc', '1e3', '.5'])
      expect(parsePriceCents(text)).toBeUndefined();
  });
});

describe('datetime-local conversion', () => {
  it("reads the picker's value as local time and sends it as UTC", () => {
    expect(localDateTimeToIso('2030-01-15T10:00')).toBe(new Date(2030, 0, 15, 10, 0).toISOString());
    expect(localDateTimeToIso('2030-01-15')).toBeUndefined();
    expect(localDateTimeToIso('not a date')).toBeUndefined();
  });

  it('round-trips a local time to the minute', () => {
    const date = new Date(2030, 5, 1, 8, 5, 59);
    expect(toLocalDateTime(date)).toBe('2030-06-01T08:05');
  });

  it('defaults to a sale open from its creation (the current minute) and running two hours', () => {
    const now = new Date(2030, 0, 15, 10, 0, 30);
    const defaults = defaultSaleFormValues(now);
    expect(defaults.startsAt).toBe('2030-01-15T10:00');
    expect(Date.parse(saleFormSchema.parse({ ...valid, startsAt: defaults.startsAt }).startsAt!)).toBeLessThanOrEqual(
      now.getTime(),
    );
    expect(defaults.endsAt).toBe('2030-01-15T12:00');
    expect(defaults.strategy).toBe('redis-lua');
    expect(defaults.paymentTimeoutSeconds).toBe('600');
  });
});

describe('saleFormSchema', () => {
  it('turns valid input into the POST /api/admin/sales body', () => {
    expect(saleFormSchema.parse(valid)).toEqual(makeCreateSaleRequest());
  });

  it('sends description and image only when given', () => {
    const body = saleFormSchema.parse({
      ...valid,
      description: 'Light and fast',
      imageUrl: 'https://img.example/a.png',
    });
    expect(body).toMatchObject({ description: 'Light and fast', imageUrl: 'https://img.example/a.png' });
  });

  it('asks for a name of 1 to 120 characters', () => {
    expect(errorsOf({ name: '   ' })).toEqual({ name: 'Enter a name' });
    expect(errorsOf({ name: 'x'.repeat(121) })).toEqual({ name: 'At most 120 characters' });
    expect(errorsOf({ name: 'x'.repeat(120) })).toEqual({});
  });

  it('bounds the price to $0 … $1,000,000.00', () => {
    expect(errorsOf({ price: '' })).toEqual({ price: 'Enter a price' });
    expect(errorsOf({ price: '4,99' })).toEqual({ price: 'Enter an amount in dollars, like 49.99' });
    expect(errorsOf({ price: '1000000.01' })).toEqual({ price: 'At most $1,000,000.00' });
    expect(errorsOf({ price: '1000000.00' })).toEqual({});
    expect(saleFormSchema.parse({ ...valid, price: '0' }).priceCents).toBe(0);
  });

  it('keeps stock, per-user limit and payment timeout within the domain limits', () => {
    expect(errorsOf({ stock: '0' })).toEqual({ stock: 'At least 1' });
    expect(errorsOf({ stock: String(SALE_LIMITS.maxStock + 1) })).toEqual({ stock: 'At most 10,000,000' });
    expect(errorsOf({ stock: '2.5' })).toEqual({ stock: 'Enter a whole number' });
    expect(errorsOf({ stock: '' })).toEqual({ stock: 'Enter how many units are for sale' });
    expect(errorsOf({ perUserLimit: String(SALE_LIMITS.maxPerUserLimit + 1) })).toEqual({ perUserLimit: 'At most 20' });
    expect(errorsOf({ paymentTimeoutSeconds: '9' })).toEqual({ paymentTimeoutSeconds: 'At least 10' });
    expect(errorsOf({ paymentTimeoutSeconds: '86401' })).toEqual({ paymentTimeoutSeconds: 'At most 86,400' });
    expect(errorsOf({ buckets: '0' })).toEqual({ buckets: 'At least 1' });
    expect(errorsOf({ buckets: String(SALE_LIMITS.maxBuckets + 1) })).toEqual({ buckets: 'At most 16' });
  });

  it('sends buckets only for a redis-lua sale spread over more than one', () => {
    expect(saleFormSchema.parse(valid)).not.toHaveProperty('buckets');
    expect(saleFormSchema.parse({ ...valid, buckets: '3' })).toMatchObject({ buckets: 3 });
    expect(saleFormSchema.parse({ ...valid, buckets: '3', strategy: 'db-optimistic' })).not.toHaveProperty('buckets');
  });

  it('wants the sale to end after it starts, even while other fields are wrong', () => {
    expect(errorsOf({ endsAt: '2030-01-15T09:59' })).toEqual({ endsAt: 'The sale must end after it starts' });
    expect(errorsOf({ endsAt: valid.startsAt })).toEqual({ endsAt: 'The sale must end after it starts' });
    expect(errorsOf({ name: '', endsAt: '2030-01-15T09:59' })).toEqual({
      name: 'Enter a name',
      endsAt: 'The sale must end after it starts',
    });
    expect(errorsOf({ startsAt: '' })).toEqual({ startsAt: 'Choose when the sale starts' });
  });

  it('accepts only http(s) image addresses', () => {
    const message = 'Enter a web address starting with http:// or https://';
    expect(errorsOf({ imageUrl: 'ftp://img.example/a.png' })).toEqual({ imageUrl: message });
    expect(errorsOf({ imageUrl: 'javascript:alert(1)' })).toEqual({ imageUrl: message });
    expect(errorsOf({ imageUrl: 'not a url' })).toEqual({ imageUrl: message });
    expect(errorsOf({ imageUrl: 'http://img.example/a.png' })).toEqual({});
  });

  it('knows only the four strategies', () => {
    expect(errorsOf({ strategy: 'fast' as never })).toHaveProperty('strategy');
    expect(errorsOf({ strategy: 'naive-unsafe' })).toEqual({});
  });
});

describe('the waiting room fields', () => {
  const room: WaitingRoomFormValues = { enabled: true, admitPerSecond: '50', maxShopping: '', passSeconds: '120' };

  /** The first message per room field. */
  function roomErrorsOf(values: Partial<WaitingRoomFormValues>): Record<string, string> {
    const result = waitingRoomSchema.safeParse({ ...room, ...values });
    if (result.success) return {};
    const errors: Record<string, string> = {};
    for (const issue of result.error.issues) errors[issue.path.join('.')] ??= issue.message;
    return errors;
  }

  it('sends no room while switched off, whatever its numbers say', () => {
    expect(saleFormSchema.parse(valid)).not.toHaveProperty('waitingRoom');
    expect(waitingRoomSchema.parse({ ...room, enabled: false, admitPerSecond: 'lots' })).toBeNull();
  });

  it('sends the room with its numbers, and no cap when max shopping is left empty', () => {
    expect(saleFormSchema.parse({ ...valid, waitingRoom: room })).toMatchObject({
      waitingRoom: { admitPerSecond: 50, passSeconds: 120 },
    });
    expect(waitingRoomSchema.parse(room)).toEqual({ admitPerSecond: 50, passSeconds: 120 });
    expect(waitingRoomSchema.parse({ ...room, maxShopping: ' 200 ' })).toEqual({
      admitPerSecond: 50,
      maxShopping: 200,
      passSeconds: 120,
    });
  });

  it('keeps each number within WAITING_ROOM_LIMITS', () => {
    expect(roomErrorsOf({ admitPerSecond: '0' })).toEqual({ admitPerSecond: 'At least 1' });
    expect(roomErrorsOf({ admitPerSecond: String(WAITING_ROOM_LIMITS.maxAdmitPerSecond + 1) })).toEqual({
      admitPerSecond: 'At most 100,000',
    });
    expect(roomErrorsOf({ admitPerSecond: '' })).toEqual({
      admitPerSecond: 'Enter how many buyers to admit per second',
    });
    expect(roomErrorsOf({ passSeconds: String(WAITING_ROOM_LIMITS.minPassSeconds - 1) })).toEqual({
      passSeconds: 'At least 10',
    });
    expect(roomErrorsOf({ passSeconds: String(WAITING_ROOM_LIMITS.maxPassSeconds + 1) })).toEqual({
      passSeconds: 'At most 3,600',
    });
    expect(roomErrorsOf({ maxShopping: '0' })).toEqual({ maxShopping: 'At least 1' });
    expect(roomErrorsOf({ maxShopping: '2.5' })).toEqual({ maxShopping: 'Enter a whole number' });
    expect(roomErrorsOf({ maxShopping: String(WAITING_ROOM_LIMITS.maxMaxShopping + 1) })).toEqual({
      maxShopping: 'At most 10,000,000',
    });
  });

  it("shows a sale's room in its fields, and a new room's defaults switched off", () => {
    expect(waitingRoomFormValues(null)).toEqual({
      enabled: false,
      admitPerSecond: '50',
      maxShopping: '',
      passSeconds: '120',
    });
    expect(waitingRoomFormValues({ admitPerSecond: 5, maxShopping: 40, passSeconds: 60 })).toEqual({
      enabled: true,
      admitPerSecond: '5',
      maxShopping: '40',
      passSeconds: '60',
    });
  });
});
