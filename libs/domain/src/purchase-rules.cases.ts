import { ErrorCode } from './error-code';
import type { PurchaseRefusalCode } from './purchase-rules';

/**
 * What the purchase rules answer, case by case: the table that test/purchase/purchase-rules.int.spec.ts runs
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

/** A case's world: a live sale of 5 units, 1 per buyer, nothing sold yet, alice with a fresh submit token. */
function purchaseCase(
  name: string,
  world: Partial<Omit<PurchaseRuleCase, 'name' | 'expected'>>,
  expected: PurchaseOutcome,
): PurchaseRuleCase {
  return { name, sale: sale(5), earlier: [], window: 'live', purchase: fresh(1), ...world, expected };
}
function sale(stock: number, perUserLimit = 1) {
  return { stock, perUserLimit };
}
function fresh(quantity: number) {
  return { submitToken: 'fresh' as const, quantity };
}
const alice = (quantity: number) => ({ buyer: 'alice' as const, quantity });
const bob = (quantity: number) => ({ buyer: 'bob' as const, quantity });

export const PURCHASE_RULE_CASES: readonly PurchaseRuleCase[] = [
  purchaseCase('a live sale with units left: accepted', {}, 'ACCEPT'),
  // The window.
  purchaseCase('before the start', { window: 'not-started' }, ErrorCode.SaleNotStarted),
  purchaseCase('after the end', { window: 'ended' }, ErrorCode.SaleEnded),
  purchaseCase(
    'the start comes first: before a bad submit token, the limit and the stock',
    { sale: sale(1), earlier: [bob(1)], window: 'not-started', purchase: { submitToken: 'unknown', quantity: 2 } },
    ErrorCode.SaleNotStarted,
  ),
  purchaseCase(
    'the end comes before a replay',
    { earlier: [alice(1)], window: 'ended', purchase: { submitToken: 'used-by-alice', quantity: 1 } },
    ErrorCode.SaleEnded,
  ),
  // The submit token.
  purchaseCase(
    'an unknown submit token',
    { purchase: { submitToken: 'unknown', quantity: 1 } },
    ErrorCode.TokenInvalid,
  ),
  purchaseCase(
    "someone else's submit token",
    { purchase: { submitToken: 'issued-to-bob', quantity: 1 } },
    ErrorCode.TokenInvalid,
  ),
  purchaseCase(
    'a submit token someone else bought with',
    { earlier: [bob(1)], purchase: { submitToken: 'used-by-bob', quantity: 1 } },
    ErrorCode.TokenInvalid,
  ),
  purchaseCase(
    'the submit token comes before the limit and the stock',
    { sale: sale(1), earlier: [alice(1)], purchase: { submitToken: 'unknown', quantity: 1 } },
    ErrorCode.TokenInvalid,
  ),
  // The replay.
  purchaseCase(
    'a replay: the same order again',
    { earlier: [alice(1)], purchase: { submitToken: 'used-by-alice', quantity: 1 } },
    'REPLAY',
  ),
  purchaseCase(
    'a replay comes before the limit and the stock, whatever quantity is asked now',
    { sale: sale(1), earlier: [alice(1)], purchase: { submitToken: 'used-by-alice', quantity: 2 } },
    'REPLAY',
  ),
  // The per-user limit.
  purchaseCase('the per-user limit reached', { earlier: [alice(1)] }, ErrorCode.LimitReached),
  purchaseCase(
    'more units in one purchase than the limit allows',
    { sale: sale(5, 2), purchase: fresh(3) },
    ErrorCode.LimitReached,
  ),
  purchaseCase(
    'the limit counts units, not orders',
    { sale: sale(10, 3), earlier: [alice(2)], purchase: fresh(2) },
    ErrorCode.LimitReached,
  ),
  purchaseCase('the limit comes before the stock', { sale: sale(1), earlier: [alice(1)] }, ErrorCode.LimitReached),
  purchaseCase('a second purchase within the limit', { sale: sale(5, 2), earlier: [alice(1)] }, 'ACCEPT'),
  purchaseCase("other buyers' units do not count against the limit", { earlier: [bob(1)] }, 'ACCEPT'),
  // The stock.
  purchaseCase('sold out', { sale: sale(1), earlier: [bob(1)] }, ErrorCode.SoldOut),
  purchaseCase('exactly the last unit', { sale: sale(2), earlier: [bob(1)] }, 'ACCEPT'),
  purchaseCase(
    'more units than are left',
    { sale: sale(3, 2), earlier: [bob(2)], purchase: fresh(2) },
    ErrorCode.SoldOut,
  ),
  purchaseCase(
    'several units, exactly what is left',
    { sale: sale(3, 2), earlier: [bob(1)], purchase: fresh(2) },
    'ACCEPT',
  ),
];
