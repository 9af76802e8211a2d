/** A buyer's steps, as the k6 scenarios take them, and the outcome counters they feed. */
import { setTimeout as sleep } from 'node:timers/promises';

/** Outcome counters of one run. */
export function tally() {
  return {
    accepted: 0,
    soldOut: 0,
    limit: 0,
    unexpected: 0,
    otherBroken: 0,
    signIn429: 0,
    retriedLater: 0,
    gaveUp: 0,
    notes: [],
  };
}

/** Guest sign-in and one submit token; null (counted as broken) on failure. */
export async function prepare(rec, t, saleId, name) {
  const guest = await rec.call('auth_guest', 'POST', '/api/auth/guest', { json: { name } });
  if (guest.status !== 201) {
    if (guest.status === 429) t.signIn429++;
    t.otherBroken++;
    return null;
  }
  const token = await rec.call('token', 'POST', `/api/sales/${saleId}/tokens`, { token: guest.body.token });
  if (token.status !== 201) {
    t.otherBroken++;
    return null;
  }
  return { session: guest.body.token, token: token.body.token };
}

function classify(t, answer, strategy) {
  const code = answer.body?.error?.code;
  const success = strategy === 'redis-lua' ? 202 : 201;
  if (answer.status === success && answer.body?.orderNo) return (t.accepted++, 'accepted');
  if (answer.status === 410 && code === 'SOLD_OUT') return (t.soldOut++, 'sold_out');
  if (answer.status === 409 && code === 'LIMIT_REACHED') return (t.limit++, 'limit');
  if (answer.status === 409 && code === 'SALE_NOT_STARTED') return 'not_started';
  if ((answer.status === 503 && code === 'UNAVAILABLE') || (answer.status === 429 && code === 'RATE_LIMITED')) {
    return (t.retriedLater++, 'retry_later');
  }
  t.unexpected++;
  if (t.notes.length < 3) t.notes.push(`purchase ${answer.status} ${code ?? ''}`);
  return 'unexpected';
}

/**
 * One purchase, resent with the same token after a `409 SALE_NOT_STARTED` (for 5 s) and after a
 * `429`/`503` + `retry-after` (for RETRY_LATER_SECONDS of load-tests/lib/flows.ts), as k6's buyers do.
 */
export async function purchase(rec, t, buyer, saleId, strategy, submitToken = buyer.token) {
  const deadline = Date.now() + 5000;
  const retryLaterUntil = Date.now() + 15_000;
  for (;;) {
    const answer = await rec.call('purchase', 'POST', `/api/sales/${saleId}/purchase`, {
      token: buyer.session,
      json: { token: submitToken },
    });
    const outcome = classify(t, answer, strategy);
    if (outcome === 'retry_later') {
      const wait = (answer.retryAfter ?? 1) * 1000;
      if (Date.now() + wait > retryLaterUntil) return (t.gaveUp++, { outcome, answer });
      await sleep(wait);
      continue;
    }
    if (outcome !== 'not_started' || Date.now() > deadline) return { outcome, answer };
    await sleep(50);
  }
}
