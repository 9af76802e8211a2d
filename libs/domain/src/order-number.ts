import { monotonicFactory } from 'ulid';

/**
 * Random fractions for ulid from the platform's CSPRNG (Web Crypto: Node and browsers alike), drawn
 * 4 KiB at a time. ulid's own default asks Web Crypto for one byte per character — 16 calls for every
 * new millisecond, a visible share of the purchase endpoint's CPU. Same source, same distribution
 * (a byte / 256, of which ulid takes the top five bits per character), far fewer calls.
 */
const randomPool = new Uint8Array(4096);
let randomPoolNext = randomPool.length;

function pooledRandom(): number {
  if (randomPoolNext === randomPool.length) {
    globalThis.crypto.getRandomValues(randomPool);
    randomPoolNext = 0;
  }
  return randomPool[randomPoolNext++]! / 256;
}

/**
 * Order numbers look like `S42-01JD5XK3Q8R5J7Z2W4N6M8P0TA`: the sale id, then a ULID.
 *
 * Uniqueness across any number of API instances needs no central lock: a ULID is 48 bits of
 * millisecond time plus 80 random bits, and the monotonic factory increments the random part for
 * numbers made in the same millisecond by the same process, so one process never repeats itself and
 * two processes collide only if they draw the same 80 random bits in the same millisecond (~2^-80).
 * Two backstops make even that harmless: the reservation script refuses an order number the sale
 * already holds (the caller retries with a fresh one), and `orders.order_no` has a unique index.
 *
 * The sale id prefix lets anyone holding only the order number find the sale's Redis reservation
 * (to show a QUEUED order) without a global index.
 */
export class OrderNumberGenerator {
  private readonly nextUlid = monotonicFactory(pooledRandom);

  next(saleId: string): string {
    return `S${saleId}-${this.nextUlid()}`;
  }
}

const ORDER_NUMBER_PATTERN = /^S([1-9][0-9]{0,18})-([0-9A-HJKMNP-TV-Z]{26})$/;

/** The sale an order number belongs to, or `undefined` when the string is not an order number. */
export function saleIdOfOrderNumber(orderNo: string): string | undefined {
  return ORDER_NUMBER_PATTERN.exec(orderNo)?.[1];
}
