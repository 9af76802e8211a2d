// Custom metrics shared by every scenario. k6 requires them to be created in the init context, which
// is what importing this module does.
import { Counter, Gauge, Trend } from 'k6/metrics';
import type { PurchaseOutcome } from './api.ts';

/** One per purchase answer, by outcome (a replayed token counts once more in `purchase_replayed`). */
export const purchaseAccepted = new Counter('purchase_accepted');
export const purchaseSoldOut = new Counter('purchase_sold_out');
export const purchaseLimitReached = new Counter('purchase_limit_reached');
/** Anything docs/api.md does not promise for a purchase: a threshold keeps it at 0. */
export const purchaseUnexpected = new Counter('purchase_unexpected');
/** 409 SALE_NOT_STARTED answers that were retried because the buyer's clock ran ahead (not an error). */
export const purchaseEarly = new Counter('purchase_early_retries');
/** `429`/`503` answers with `retry-after`, waited out and sent again with the same token (not errors). */
export const purchaseRetriedLater = new Counter('purchase_retried_later');
/**
 * Buyers still told "retry later" after RETRY_LATER_SECONDS of waiting: the API did not keep up. A
 * Latency-verdict threshold (the contract allows the answer; a shop whose buyers give up is still slow).
 */
export const purchaseGaveUp = new Counter('purchase_gave_up');
/** A replay of a token that had succeeded, answered with the same order number (duplicate-clicks). */
export const purchaseReplayed = new Counter('purchase_replayed');
/** Purchase latency as the buyer saw it (the purchase request only). */
export const purchaseDuration = new Trend('purchase_duration', true);
/**
 * Buyers who all buy in the same instant (the stampede, the comparison's instant): ms from that instant
 * to each buyer's final answer. Every buyer queues behind the others, so its max, not a p95, is judged.
 */
export const answeredAfterOpening = new Trend('answered_after_opening', true);

/** Any other call (sign-in, token, order, pay, cancel) that broke its contract: kept at 0 too. */
export const requestUnexpected = new Counter('request_unexpected');
/**
 * One sample when setup() returned (see completeSetup). A setup that threw never adds it: the
 * `count>=1` threshold (SETUP_THRESHOLD) and the report's verdict then fail the run, instead of a
 * run with no sale to buy from passing every other threshold vacuously.
 */
export const setupCompleted = new Counter('setup_completed');

/**
 * Guest sign-ins answered `429`: the API runs with the standard per-IP sign-in limit, which a load
 * test from one address exhausts at once. The report's first lines say what to start the API with.
 */
export const signInRateLimited = new Counter('sign_in_rate_limited');

/** Buyers whose preparation (sign-in + token) was not done when the sale opened: the burst got thinner. */
export const buyersLate = new Counter('buyers_late');

// Written by teardown from the audit, one sample per audited sale (tagged strategy and sale).
export const oversoldUnits = new Gauge('oversold_units');
export const duplicateOrders = new Gauge('duplicate_orders');
export const lostReservations = new Gauge('lost_reservations');
/** 1 when the audit said ok and the queue had drained, else 0. */
export const auditOk = new Gauge('audit_ok');
/** Units held by PENDING_PAYMENT + PAID orders at the end (what was really sold and not returned). */
export const heldUnits = new Gauge('held_units');
/**
 * oversold + duplicateOrders + lostReservations, plus 1 for an audit that is not ok, one that still had
 * QUEUED orders when teardown gave up waiting, or one that could not be fetched: 0 means clean.
 */
export const auditViolations = new Counter('audit_violations');

const warned: Record<string, number> = {};

/** At most `limit` lines per kind per VU, so a broken run does not drown the terminal. */
export function warnSome(kind: string, message: string, limit = 3): void {
  const seen = warned[kind] ?? 0;
  warned[kind] = seen + 1;
  if (seen < limit) console.warn(`[${kind}] ${message}`);
}

/** Counts one purchase answer under its outcome, with `tags` (e.g. `{strategy}`) on every sample. */
export function recordPurchase(outcome: PurchaseOutcome, durationMs: number, tags: Record<string, string> = {}): void {
  purchaseDuration.add(durationMs, tags);
  switch (outcome.kind) {
    case 'accepted':
      purchaseAccepted.add(1, tags);
      return;
    case 'sold_out':
      purchaseSoldOut.add(1, tags);
      return;
    case 'limit_reached':
      purchaseLimitReached.add(1, tags);
      return;
    case 'not_started':
      purchaseEarly.add(1, tags);
      return;
    case 'retry_later':
      purchaseRetriedLater.add(1, tags);
      return;
    case 'unexpected':
      purchaseUnexpected.add(1, { ...tags, status: String(outcome.status), code: outcome.code || 'none' });
      warnSome('purchase', `unexpected answer HTTP ${outcome.status} ${outcome.code}: ${outcome.message}`);
      return;
  }
}

/** Counts a non-purchase call that broke its contract. */
export function recordUnexpected(
  endpoint: string,
  result: { status: number; code: string; message: string },
  tags: Record<string, string> = {},
): void {
  requestUnexpected.add(1, { ...tags, endpoint, status: String(result.status) });
  if (endpoint === 'auth_guest' && result.status === 429) {
    signInRateLimited.add(1, tags);
    warnSome(
      'rate-limit',
      'guest sign-in answered 429: start the API with RATE_LIMIT_PROFILE=load-test (npm run start:load)',
      1,
    );
    return;
  }
  warnSome(endpoint, `HTTP ${result.status} ${result.code}: ${result.message}`);
}

/** The threshold every scenario carries: a run whose setup failed is a failed run. */
export const SETUP_THRESHOLD = { setup_completed: ['count>=1'] };

/** Wraps what setup() returns: records that setup got that far. */
export function completeSetup<T>(data: T): T {
  setupCompleted.add(1);
  return data;
}
