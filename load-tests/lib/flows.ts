// Buyer steps shared by the scenarios: sign in and fetch a token, wait for the opening instant, buy
// once, wait for an order's row.
import { sleep } from 'k6';
import type { Order } from '../../libs/contract/src/order.ts';
import type { SaleStrategy } from '../../libs/contract/src/sale.ts';
import { type Api, type PurchaseOutcome, type Session, stillNotStarted } from './api.ts';
import { answeredAfterOpening, buyersLate, purchaseGaveUp, recordPurchase, recordUnexpected } from './metrics.ts';

/** How long a buyer keeps sending its token again after `429`/`503` + `retry-after` answers. */
export const RETRY_LATER_SECONDS = 15;

export interface Buyer {
  session: Session;
  /** A submit token for the sale (single use, 120 s by default). */
  token: string;
}

/** Guest sign-in + one submit token for `saleId`; null (counted in `request_unexpected`) on failure. */
export function prepareBuyer(api: Api, saleId: string, name: string, tags: Record<string, string> = {}): Buyer | null {
  const session = api.guest(name, tags);
  if (!session.ok) {
    recordUnexpected('auth_guest', session, tags);
    return null;
  }
  const token = api.submitToken(session.value, saleId, tags);
  if (!token.ok) {
    recordUnexpected('token', token, tags);
    return null;
  }
  return { session: session.value, token: token.value.token };
}

/** Sleeps until `epochMs`; counts the buyer in `buyers_late` if that instant had already passed. */
export function sleepUntil(epochMs: number, tags: Record<string, string> = {}): void {
  const wait = epochMs - Date.now();
  if (wait > 0) sleep(wait / 1000);
  else buyersLate.add(1, tags);
}

/**
 * When a buyer sends the same token again, which a refusal leaves valid. A `409 SALE_NOT_STARTED`
 * (this machine's clock a little ahead of the API's): every 50 ms for at most `notStartedSeconds`, after
 * which it counts as unexpected. A `429`/`503` with `retry-after`: after the wait it names, as the
 * storefront does, for RETRY_LATER_SECONDS; after that the buyer gives up (`purchase_gave_up`).
 */
export class Resends {
  private readonly notStartedUntil: number;
  private readonly retryLaterUntil: number;

  constructor(private readonly notStartedSeconds = 5) {
    this.notStartedUntil = Date.now() + notStartedSeconds * 1000;
    this.retryLaterUntil = Date.now() + RETRY_LATER_SECONDS * 1000;
  }

  /** Seconds to wait before sending the token again, or undefined when this answer is the last. */
  waitBeforeResend(outcome: PurchaseOutcome): number | undefined {
    if (outcome.kind === 'not_started') return Date.now() < this.notStartedUntil ? 0.05 : undefined;
    if (outcome.kind === 'retry_later' && Date.now() + outcome.retryAfterSeconds * 1000 <= this.retryLaterUntil) {
      return outcome.retryAfterSeconds;
    }
    return undefined;
  }

  /** The last answer as it counts: a `SALE_NOT_STARTED` that outlived its resends is unexpected. */
  final(outcome: PurchaseOutcome): PurchaseOutcome {
    return outcome.kind === 'not_started' ? stillNotStarted(this.notStartedSeconds) : outcome;
  }
}

/** One purchase, counted under its outcome, sent again as `Resends` says. */
export function buy(
  api: Api,
  buyer: Buyer,
  saleId: string,
  strategy: SaleStrategy,
  tags: Record<string, string> = {},
  notStartedRetrySeconds = 5,
): PurchaseOutcome {
  const resends = new Resends(notStartedRetrySeconds);
  for (;;) {
    const { outcome, res } = api.purchase(buyer.session, saleId, buyer.token, strategy, { tags });
    const wait = resends.waitBeforeResend(outcome);
    if (wait === undefined) {
      const final = resends.final(outcome);
      recordPurchase(final, res.timings.duration, tags);
      if (final.kind === 'retry_later') purchaseGaveUp.add(1, tags);
      return final;
    }
    recordPurchase(outcome, res.timings.duration, tags);
    sleep(wait);
  }
}

/**
 * One buyer of an instant: signs in and takes a token, sleeps until `instantMs` (epoch ms, the same for
 * every buyer of the crowd), buys once (with its resends), and records how long after the instant its
 * final answer came (`answered_after_opening`, with `tags`). Null when the buyer could not prepare (counted
 * as unexpected).
 */
export function buyAtTheInstant(
  api: Api,
  saleId: string,
  name: string,
  instantMs: number,
  strategy: SaleStrategy,
  tags: Record<string, string> = {},
): PurchaseOutcome | null {
  const buyer = prepareBuyer(api, saleId, name);
  if (!buyer) return null;
  sleepUntil(instantMs);
  const outcome = buy(api, buyer, saleId, strategy);
  answeredAfterOpening.add(Math.max(0, Date.now() - instantMs), tags);
  return outcome;
}

/**
 * Polls `GET /api/orders/:orderNo` until the order has left QUEUED (its row is written), at most
 * `timeoutSeconds`. Returns the order, or null (counted in `request_unexpected`) if it did not.
 */
export function waitUntilWritten(
  api: Api,
  session: Session,
  orderNo: string,
  timeoutSeconds: number,
  tags: Record<string, string> = {},
): Order | null {
  const deadline = Date.now() + timeoutSeconds * 1000;
  for (;;) {
    const order = api.order(session.token, orderNo, tags);
    if (!order.ok) {
      recordUnexpected('get_order', order, tags);
      return null;
    }
    if (order.value.status !== 'QUEUED') return order.value;
    if (Date.now() >= deadline) {
      recordUnexpected(
        'get_order',
        {
          status: order.status,
          code: 'STILL_QUEUED',
          message: `order ${orderNo} still QUEUED after ${timeoutSeconds} s`,
        },
        tags,
      );
      return null;
    }
    sleep(0.2);
  }
}
