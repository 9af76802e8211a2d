import {
  type CreateSaleRequest,
  SALE_DEFAULTS,
  SALE_LIMITS,
  SALE_STRATEGIES,
  type SaleStrategy,
  WAITING_ROOM_DEFAULTS,
  WAITING_ROOM_LIMITS,
  type WaitingRoomRequest,
  type WaitingRoomSettings,
  sellsFromRedis,
} from '@flash-sale/contract';
import { z } from 'zod';

/** What the create-sale form's inputs hold: strings, exactly as the browser hands them over. */
export interface SaleFormValues {
  name: string;
  description: string;
  imageUrl: string;
  /** Dollars as typed, e.g. "49.99". */
  price: string;
  stock: string;
  perUserLimit: string;
  /** `<input type="datetime-local">` values: the admin's local wall-clock time, no zone. */
  startsAt: string;
  endsAt: string;
  strategy: SaleStrategy;
  paymentTimeoutSeconds: string;
  /** redis-lua only: Redis buckets the stock is spread over. */
  buckets: string;
  waitingRoom: WaitingRoomFormValues;
}

/** A sale's waiting room as its fields hold it: the numbers are checked only while `enabled` is on. */
export interface WaitingRoomFormValues {
  enabled: boolean;
  admitPerSecond: string;
  /** Empty: no cap. */
  maxShopping: string;
  passSeconds: string;
}

/** What a new room admits per second until the admin says otherwise. */
const DEFAULT_ADMIT_PER_SECOND = 50;

/** The fields of a sale's room (`null`: none), or a new room's defaults, switched off. */
export function waitingRoomFormValues(settings: WaitingRoomSettings | null): WaitingRoomFormValues {
  return {
    enabled: settings !== null,
    admitPerSecond: String(settings?.admitPerSecond ?? DEFAULT_ADMIT_PER_SECOND),
    maxShopping: settings?.maxShopping === undefined ? '' : String(settings.maxShopping),
    passSeconds: String(settings?.passSeconds ?? WAITING_ROOM_DEFAULTS.passSeconds),
  };
}

/**
 * "49.99" → 4999 in integer arithmetic (49.99 * 100 is 4998.999… in floating point). At most two
 * decimals; no thousands separators, since "1,5" could mean 1.5 as much as 15.
 */
export function parsePriceCents(text: string): number | undefined {
  const match = /^(\d{1,9})(?:\.(\d{1,2}))?$/.exec(text.trim());
  if (!match) return undefined;
  const [, dollars = '0', cents = ''] = match;
  return Number(dollars) * 100 + Number(cents.padEnd(2, '0'));
}

/** A datetime-local value ("2030-01-15T10:00", local time) as an ISO instant in UTC. */
export function localDateTimeToIso(value: string): string | undefined {
  // Without a zone, ECMAScript reads a date-time string as local time: what the admin saw in the picker.
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?$/.test(value)) return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

/** A Date as a datetime-local value in the browser's zone, to the minute. */
export function toLocalDateTime(date: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return (
    `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}` +
    `T${pad(date.getHours())}:${pad(date.getMinutes())}`
  );
}

/**
 * A new sale opens as soon as it is created and runs for two hours. Its start is the current minute
 * (the picker's precision), so already past by a few seconds when sent, which the API takes as "open
 * now" (docs/api.md: `startsAt` defaults to now and may be any instant before `endsAt`); a sale is
 * ready to sell on creation, with nothing to preload first.
 */
export function defaultSaleFormValues(now: Date): SaleFormValues {
  return {
    name: '',
    description: '',
    imageUrl: '',
    price: '',
    stock: '100',
    perUserLimit: String(SALE_DEFAULTS.perUserLimit),
    startsAt: toLocalDateTime(now),
    endsAt: toLocalDateTime(new Date(now.getTime() + 2 * 3_600_000)),
    strategy: SALE_DEFAULTS.strategy,
    paymentTimeoutSeconds: String(SALE_DEFAULTS.paymentTimeoutSeconds),
    buckets: '1',
    waitingRoom: waitingRoomFormValues(null),
  };
}

const count = (n: number) => n.toLocaleString('en-US');

/** The form's whole-number fields: their bounds (the API's limits) and what to say when one is left empty. */
export const WHOLE_NUMBER_FIELDS = {
  stock: { min: 1, max: SALE_LIMITS.maxStock, missing: 'Enter how many units are for sale' },
  perUserLimit: { min: 1, max: SALE_LIMITS.maxPerUserLimit, missing: 'Enter how many units one customer may buy' },
  paymentTimeoutSeconds: {
    min: SALE_LIMITS.minPaymentTimeoutSeconds,
    max: SALE_LIMITS.maxPaymentTimeoutSeconds,
    missing: 'Enter the payment timeout',
  },
  buckets: { min: 1, max: SALE_LIMITS.maxBuckets, missing: 'Enter how many buckets' },
} as const satisfies Partial<Record<keyof SaleFormValues, { min: number; max: number; missing: string }>>;

/** The room's whole-number fields, bounded by WAITING_ROOM_LIMITS (`maxShopping` may be left empty). */
export const WAITING_ROOM_FIELDS = {
  admitPerSecond: {
    min: WAITING_ROOM_LIMITS.minAdmitPerSecond,
    max: WAITING_ROOM_LIMITS.maxAdmitPerSecond,
    missing: 'Enter how many buyers to admit per second',
  },
  maxShopping: { min: 1, max: WAITING_ROOM_LIMITS.maxMaxShopping, missing: '' },
  passSeconds: {
    min: WAITING_ROOM_LIMITS.minPassSeconds,
    max: WAITING_ROOM_LIMITS.maxPassSeconds,
    missing: 'Enter how long a pass lasts',
  },
} as const satisfies Record<
  Exclude<keyof WaitingRoomFormValues, 'enabled'>,
  { min: number; max: number; missing: string }
>;

function wholeNumber({ min, max, missing }: { min: number; max: number; missing: string }) {
  return z
    .string()
    .trim()
    .min(1, missing)
    .regex(/^\d+$/, 'Enter a whole number')
    .transform(Number)
    .pipe(
      z
        .number()
        .min(min, `At least ${count(min)}`)
        .max(max, `At most ${count(max)}`),
    );
}

/** A whole number within bounds, or undefined when left empty. */
function optionalWholeNumber(bounds: { min: number; max: number; missing: string }) {
  const number = wholeNumber(bounds);
  return z.string().transform((value, ctx): number | undefined => {
    if (value.trim() === '') return undefined;
    const parsed = number.safeParse(value);
    if (parsed.success) return parsed.data;
    for (const issue of parsed.error.issues) ctx.addIssue({ code: 'custom', message: issue.message });
    return z.NEVER;
  });
}

/** A transform by `parse`, which answers undefined for what it cannot read: then `message` is the field's error. */
function parsedBy<T>(parse: (text: string) => T | undefined, message: string) {
  return (value: string, ctx: z.RefinementCtx): T => {
    const parsed = parse(value);
    if (parsed === undefined) {
      ctx.addIssue({ code: 'custom', message });
      return z.NEVER;
    }
    return parsed;
  };
}

function localInstant(missing: string) {
  return z.string().min(1, missing).transform(parsedBy(localDateTimeToIso, 'Enter a date and time'));
}

/** http(s) with a dotted host, like the API's IsUrl (which wants a top-level domain or an IP address). */
function isWebAddress(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname.includes('.');
  } catch {
    return false;
  }
}

/** A room's fields, as the `waitingRoom` of a create or `PATCH` body: `null` when switched off. */
export const waitingRoomSchema: z.ZodType<WaitingRoomRequest | null, WaitingRoomFormValues> = z
  .discriminatedUnion('enabled', [
    // Switched off, the numbers are kept as typed (the admin may switch it on again) and not checked.
    z.object({
      enabled: z.literal(false),
      admitPerSecond: z.string(),
      maxShopping: z.string(),
      passSeconds: z.string(),
    }),
    z.object({
      enabled: z.literal(true),
      admitPerSecond: wholeNumber(WAITING_ROOM_FIELDS.admitPerSecond),
      maxShopping: optionalWholeNumber(WAITING_ROOM_FIELDS.maxShopping),
      passSeconds: wholeNumber(WAITING_ROOM_FIELDS.passSeconds),
    }),
  ])
  .transform((room): WaitingRoomRequest | null =>
    room.enabled
      ? {
          admitPerSecond: room.admitPerSecond,
          ...(room.maxShopping === undefined ? {} : { maxShopping: room.maxShopping }),
          passSeconds: room.passSeconds,
        }
      : null,
  );

/**
 * The create-sale form: validates what the admin typed with the API's own limits, so mistakes show
 * beside their field instead of as a 400, and turns it into the `POST /api/admin/sales` body.
 */
export const saleFormSchema: z.ZodType<CreateSaleRequest, SaleFormValues> = z
  .object({
    name: z
      .string()
      .trim()
      .min(1, 'Enter a name')
      .max(SALE_LIMITS.maxNameLength, `At most ${SALE_LIMITS.maxNameLength} characters`),
    description: z
      .string()
      .trim()
      .max(SALE_LIMITS.maxDescriptionLength, `At most ${count(SALE_LIMITS.maxDescriptionLength)} characters`),
    imageUrl: z
      .string()
      .trim()
      .max(SALE_LIMITS.maxImageUrlLength, `At most ${SALE_LIMITS.maxImageUrlLength} characters`)
      .refine((value) => value === '' || isWebAddress(value), 'Enter a web address starting with http:// or https://'),
    price: z
      .string()
      .trim()
      .min(1, 'Enter a price')
      .transform(parsedBy(parsePriceCents, 'Enter an amount in dollars, like 49.99'))
      .pipe(z.number().max(SALE_LIMITS.maxPriceCents, 'At most $1,000,000.00')),
    stock: wholeNumber(WHOLE_NUMBER_FIELDS.stock),
    perUserLimit: wholeNumber(WHOLE_NUMBER_FIELDS.perUserLimit),
    startsAt: localInstant('Choose when the sale starts'),
    endsAt: localInstant('Choose when the sale ends'),
    strategy: z.enum(SALE_STRATEGIES, 'Choose a strategy'),
    paymentTimeoutSeconds: wholeNumber(WHOLE_NUMBER_FIELDS.paymentTimeoutSeconds),
    buckets: wholeNumber(WHOLE_NUMBER_FIELDS.buckets),
    waitingRoom: waitingRoomSchema,
  })
  .refine((sale) => Date.parse(sale.endsAt) > Date.parse(sale.startsAt), {
    message: 'The sale must end after it starts',
    path: ['endsAt'],
    // Compare the two times whenever both parsed, even while other fields still have errors.
    when: ({ issues }) => !issues.some((issue) => issue.path?.[0] === 'startsAt' || issue.path?.[0] === 'endsAt'),
  })
  .transform(({ price, description, imageUrl, buckets, waitingRoom, ...sale }): CreateSaleRequest => ({
    ...sale,
    priceCents: price,
    ...(waitingRoom ? { waitingRoom } : {}),
    ...(description ? { description } : {}),
    ...(imageUrl ? { imageUrl } : {}),
    // Buckets only spread a sale Redis sells from; one is what the server assumes anyway.
    ...(sellsFromRedis(sale.strategy) && buckets > 1 ? { buckets } : {}),
  }));
