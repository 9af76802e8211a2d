import { ErrorCode } from './error-code';
import type { PurchaseRefusalCode } from './purchase-rules';

/**
 * What the purchase rules answer, case by case: the table that test/purchase-rules.int.spec.ts runs
 * against every implementation of the rules — purchase-rules.ts itself, the reservation script on a
 * real Redis and the MySQL-only strategies on a real MariaDB. Each case is a small world: a sale, the
 * purchases accepted in it so far, where its window stands now, and alice's purchase to judge.
 */

export type PurchaseOutcome = 'ACCEPT' | 'REPLAY' | PurchaseRefusalCode;

export type CaseBuyer = 'alice' | 'bob';

/**
 * The submit token alice presents:
 * - `fresh`: issued to her for this sale, never used;
 * - `unknown`: never issued by anyone;
 * - `issued-to-bob`: issued to bob for this sale, never used;
 * - `used-by-bob` / `used-by-alice`: the one that buyer's first earlier purchase was made with.
 */
export type CaseSubmitToken = 'fresh' | 'unknown' | 'issued-to-bob' | 'used-by-bob' | 'used-by-alice';

export interface PurchaseRuleCase {
  name: string;
  sale: { stock: number; perUserLimit: number };
  /** Purchases accepted while the sale was live, in this order, each with a fresh submit token of its own. */
  earlier: { buyer: CaseBuyer; quantity: number }[];
  /** Where the window stands when alice buys (it was live for the earlier purchases). */
  window: 'live' | 'not-started' | 'ended';
  purchase: { submitToken: CaseSubmitToken; quantity: number };
  expected: PurchaseOutcome;
}

const sale = (stock: number, perUserLimit = 1) => ({ stock, perUserLimit });
const fresh = (quantity = 1) => ({ submitToken: 'fresh' as const, quantity });

export const PURCHASE_RULE_CASES: readonly PurchaseRuleCase[] = [
  {
    name: 'a live sale with units left: accepted',
    sale: sale(5),
    earlier: [],
    window: 'live',
    purchase: fresh(),
    expected: 'ACCEPT',
  },
  {
    name: 'before the start',
    sale: sale(5),
    earlier: [],
    window: 'not-started',
    purchase: fresh(),
    expected: ErrorCode.SaleNotStarted,
  },
  {
    name: 'after the end',
    sale: sale(5),
    earlier: [],
    window: 'ended',
    purchase: fresh(),
    expected: ErrorCode.SaleEnded,
  },
  {
    name: 'the start comes first: before a bad submit token, the limit and the stock',
    sale: sale(1),
    earlier: [{ buyer: 'bob', quantity: 1 }],
    window: 'not-started',
    purchase: { submitToken: 'unknown', quantity: 2 },
    expected: ErrorCode.SaleNotStarted,
  },
  {
    name: 'the end comes before a replay',
    sale: sale(2),
    earlier: [{ buyer: 'alice', quantity: 1 }],
    window: 'ended',
    purchase: { submitToken: 'used-by-alice', quantity: 1 },
    expected: ErrorCode.SaleEnded,
  },
  {
    name: 'an unknown submit token',
    sale: sale(5),
    earlier: [],
    window: 'live',
    purchase: { submitToken: 'unknown', quantity: 1 },
    expected: ErrorCode.TokenInvalid,
  },
  {
    name: "someone else's submit token",
    sale: sale(5),
    earlier: [],
    window: 'live',
    purchase: { submitToken: 'issued-to-bob', quantity: 1 },
    expected: ErrorCode.TokenInvalid,
  },
  {
    name: 'a submit token someone else bought with',
    sale: sale(5),
    earlier: [{ buyer: 'bob', quantity: 1 }],
    window: 'live',
    purchase: { submitToken: 'used-by-bob', quantity: 1 },
    expected: ErrorCode.TokenInvalid,
  },
  {
    name: 'the submit token comes before the limit and the stock',
    sale: sale(1),
    earlier: [{ buyer: 'alice', quantity: 1 }],
    window: 'live',
    purchase: { submitToken: 'unknown', quantity: 1 },
    expected: ErrorCode.TokenInvalid,
  },
  {
    name: 'a replay: the same order again',
    sale: sale(5),
    earlier: [{ buyer: 'alice', quantity: 1 }],
    window: 'live',
    purchase: { submitToken: 'used-by-alice', quantity: 1 },
    expected: 'REPLAY',
  },
  {
    name: 'a replay comes before the limit and the stock, whatever quantity is asked now',
    sale: sale(1),
    earlier: [{ buyer: 'alice', quantity: 1 }],
    window: 'live',
    purchase: { submitToken: 'used-by-alice', quantity: 2 },
    expected: 'REPLAY',
  },
  {
    name: 'the per-user limit reached',
    sale: sale(5),
    earlier: [{ buyer: 'alice', quantity: 1 }],
    window: 'live',
    purchase: fresh(),
    expected: ErrorCode.LimitReached,
  },
  {
    name: 'more units in one purchase than the limit allows',
    sale: sale(5, 2),
    earlier: [],
    window: 'live',
    purchase: fresh(3),
    expected: ErrorCode.LimitReached,
  },
  {
    name: 'the limit counts units, not orders',
    sale: sale(10, 3),
    earlier: [{ buyer: 'alice', quantity: 2 }],
    window: 'live',
    purchase: fresh(2),
    expected: ErrorCode.LimitReached,
  },
  {
    name: 'the limit comes before the stock',
    sale: sale(1),
    earlier: [{ buyer: 'alice', quantity: 1 }],
    window: 'live',
    purchase: fresh(),
    expected: ErrorCode.LimitReached,
  },
  {
    name: 'a second purchase within the limit',
    sale: sale(5, 2),
    earlier: [{ buyer: 'alice', quantity: 1 }],
    window: 'live',
    purchase: fresh(),
    expected: 'ACCEPT',
  },
  {
    name: "other buyers' units do not count against the limit",
    sale: sale(5),
    earlier: [{ buyer: 'bob', quantity: 1 }],
    window: 'live',
    purchase: fresh(),
    expected: 'ACCEPT',
  },
  {
    name: 'sold out',
    sale: sale(1),
    earlier: [{ buyer: 'bob', quantity: 1 }],
    window: 'live',
    purchase: fresh(),
    expected: ErrorCode.SoldOut,
  },
  {
    name: 'exactly the last unit',
    sale: sale(2),
    earlier: [{ buyer: 'bob', quantity: 1 }],
    window: 'live',
    purchase: fresh(),
    expected: 'ACCEPT',
  },
  {
    name: 'more units than are left',
    sale: sale(3, 2),
    earlier: [{ buyer: 'bob', quantity: 2 }],
    window: 'live',
    purchase: fresh(2),
    expected: ErrorCode.SoldOut,
  },
  {
    name: 'several units, exactly what is left',
    sale: sale(3, 2),
    earlier: [{ buyer: 'bob', quantity: 1 }],
    window: 'live',
    purchase: fresh(2),
    expected: 'ACCEPT',
  },
];
