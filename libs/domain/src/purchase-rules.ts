import { ErrorCode } from './error-code';

/**
 * The purchase rules, written once: which answer a purchase gets, checked in the order of docs/api.md
 * ("Buying"). Every way of selling asks them with the facts its store holds — the MySQL-only strategies
 * (apps/api/src/purchase/strategies/mysql/) and the local sold-out flag (sold-out-gate.ts) call these
 * functions; the reservation script (libs/redis/lua/reserve-9.lua) cannot call TypeScript and mirrors them
 * check for check. purchase-rules.cases.ts holds the cases all of them must answer alike.
 */

/** The refusals the rules answer, in the order they are checked. */
export const PURCHASE_REFUSAL_CODES = [
  ErrorCode.SaleNotStarted,
  ErrorCode.SaleEnded,
  ErrorCode.TokenInvalid,
  ErrorCode.LimitReached,
  ErrorCode.SoldOut,
] as const;

export type PurchaseRefusalCode = (typeof PURCHASE_REFUSAL_CODES)[number];

export type PurchaseDecision =
  | { readonly kind: 'accept' }
  /** The submit token already bought this buyer's order: the answer is that order again. */
  | { readonly kind: 'replay' }
  | { readonly kind: 'refuse'; readonly code: PurchaseRefusalCode };

/** What the store knows of the submit token the buyer presented. */
export interface SubmitTokenFacts {
  /** Issued to this buyer for this sale, and not expired. */
  issuedToBuyer: boolean;
  /** The buyer of the order this submit token already made in this sale, if it made one. */
  boughtBy?: string;
}

/** The facts of the checks that come before any unit is counted. */
export interface PurchaseRequestFacts {
  userId: string;
  /** The instant the purchase is judged at and the sale's window, in epoch ms (the store's clock). */
  nowMs: number;
  startsAtMs: number;
  endsAtMs: number;
  submitToken: SubmitTokenFacts;
}

export interface PurchaseUnitFacts {
  quantity: number;
  perUserLimit: number;
  /** Units the buyer holds in the sale (orders cancelled, expired or failed no longer count). */
  unitsHeld: number;
  /** Units the store can still sell. */
  available: number;
}

export type PurchaseFacts = PurchaseRequestFacts & PurchaseUnitFacts;

export const ACCEPT: PurchaseDecision = Object.freeze({ kind: 'accept' });
export const REPLAY: PurchaseDecision = Object.freeze({ kind: 'replay' });

function refuse(code: PurchaseRefusalCode): PurchaseDecision {
  return { kind: 'refuse', code };
}

/**
 * The checks that need no unit counted: the window, the submit token, the replay. `undefined` when the
 * purchase passes them and the per-user limit and the stock decide (see `decidePurchase`), so a store
 * can answer these before it reads (or locks) anything it counts.
 */
export function decidePurchaseRequest(facts: PurchaseRequestFacts): PurchaseDecision | undefined {
  if (facts.nowMs < facts.startsAtMs) return refuse(ErrorCode.SaleNotStarted);
  if (facts.nowMs >= facts.endsAtMs) return refuse(ErrorCode.SaleEnded);
  // A submit token is this buyer's when it was issued to them or already bought for them. Once it has
  // bought, its owner decides, whatever the token's own state: the store may have consumed it.
  const { issuedToBuyer, boughtBy } = facts.submitToken;
  if (boughtBy === undefined ? !issuedToBuyer : boughtBy !== facts.userId) return refuse(ErrorCode.TokenInvalid);
  if (boughtBy !== undefined) return REPLAY;
  return undefined;
}

/** Every check, in the order of docs/api.md ("Buying"): window, submit token, replay, per-user limit, stock. */
export function decidePurchase(facts: PurchaseFacts): PurchaseDecision {
  const decided = decidePurchaseRequest(facts);
  if (decided) return decided;
  if (facts.unitsHeld + facts.quantity > facts.perUserLimit) return refuse(ErrorCode.LimitReached);
  if (facts.available < facts.quantity) return refuse(ErrorCode.SoldOut);
  return ACCEPT;
}

/** What a buyer reads for each refusal of a purchase (the error body's `message`). */
export const PURCHASE_REFUSAL_MESSAGES: Readonly<Record<PurchaseRefusalCode | ErrorCode.Unavailable, string>> = {
  [ErrorCode.SaleNotStarted]: 'This sale has not started yet',
  [ErrorCode.SaleEnded]: 'This sale has ended',
  [ErrorCode.TokenInvalid]: 'The submit token is unknown, expired, or not yours for this sale',
  [ErrorCode.LimitReached]: 'You already bought as many as this sale allows per person',
  [ErrorCode.SoldOut]: 'Sold out',
  // Not a rule: the reservation script's answer for a sale Redis does not hold.
  [ErrorCode.Unavailable]: 'This sale is not loaded; an admin must preload it',
};

export function purchaseRefusalMessage(code: ErrorCode): string {
  return (PURCHASE_REFUSAL_MESSAGES as Partial<Record<ErrorCode, string>>)[code] ?? 'Purchase refused';
}
