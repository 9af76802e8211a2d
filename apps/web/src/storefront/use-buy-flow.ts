import { ErrorCode, type PurchaseAccepted, type Session } from '@flash-sale/contract';
import { useQueryClient } from '@tanstack/react-query';
import { useCallback, useEffect, useRef, useState } from 'react';
import { ApiError, isApiError } from '../api/api-error';
import { api, queryKeys } from '../api/endpoints';
import { sessionStore } from '../session/session-store';
import { pendingPurchases } from './pending-purchase';

export type BuyState =
  | { phase: 'idle' }
  | { phase: 'resuming' }
  | { phase: 'requesting-token' }
  | { phase: 'purchasing' }
  /** The API said "nothing happened, come back in `seconds`" (429 or a load-shedding 503): waiting to. */
  | { phase: 'waiting'; seconds: number }
  | { phase: 'accepted'; order: PurchaseAccepted }
  /** `context`: what the page showed when the purchase was refused (see BuyPanel: a refusal is shown only while it holds). */
  | { phase: 'refused'; error: unknown; outcomeUnknown: boolean; context?: string };

/**
 * Whether the API's answer settles the purchase. A 4xx refusal does (sold out, limit reached…: the
 * token stays usable per docs/api.md, but a fresh one is just as good). No answer, a 5xx or a 429 does
 * not: the purchase may or may not have happened, so the same token must be used for the retry.
 */
function outcomeUnknown(error: unknown): boolean {
  if (!(error instanceof ApiError)) return true;
  return error.status === 0 || error.status >= 500 || error.code === ErrorCode.RateLimited;
}

/** Automatic retries after a `retry-after` answer, and the longest wait worth doing unasked. */
const AUTOMATIC_RETRIES = 2;
const LONGEST_AUTOMATIC_WAIT_SECONDS = 10;

/**
 * Runs `attempt`; when the API answers with `retry-after` (429 RATE_LIMITED, or 503 when it sheds
 * load) — which means nothing happened — waits that long and sends the very same request again, a few
 * times, before giving the refusal to the shopper. For a purchase the request carries the same submit
 * token, so a retry can never buy twice.
 */
async function retryingAfterWaits<T>(attempt: () => Promise<T>, onWait: (seconds: number) => void): Promise<T> {
  for (let retries = 0; ; retries++) {
    try {
      return await attempt();
    } catch (error) {
      const seconds = error instanceof ApiError ? error.retryAfterSeconds : undefined;
      if (seconds === undefined || seconds > LONGEST_AUTOMATIC_WAIT_SECONDS || retries >= AUTOMATIC_RETRIES) {
        throw error;
      }
      onWait(seconds);
      await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
    }
  }
}

/**
 * A sale with a waiting room: the admission pass its submit tokens are fetched with, and what to do when
 * the API refuses it (`403 ADMISSION_REQUIRED`: the buyer's turn is over).
 */
export interface Admission {
  pass: string | undefined;
  onRequired: () => void;
}

/**
 * The Buy button's whole job: fetch a submit token, purchase with it, and make double clicks and
 * impatient reloads harmless.
 *
 * - One purchase at a time per page: a ref guards against the second click of a double click, which
 *   arrives before React has re-rendered the button as disabled.
 * - The token is saved (pending-purchase.ts) before the purchase is sent, and reused until the API
 *   answers definitively, so a retry, a second tab or a reload replays the same purchase.
 * - A `429`/`503` with `retry-after` is waited out and retried with the same token, twice at most.
 * - On mount, a pending purchase left by a reload is finished: the shopper did click Buy, and the
 *   replay either returns the order that was already made or makes the one that was asked for.
 * - On a sale with a waiting room the token is fetched with the buyer's admission pass.
 */
export function useBuyFlow(
  saleId: string,
  guest: Session | null,
  { onAccepted, admission }: { onAccepted?: (order: PurchaseAccepted) => void; admission?: Admission } = {},
) {
  const userId = guest?.user.id;
  const jwt = guest?.token;
  // A purchase a reload interrupted is finished on mount (the effect below): start in that phase.
  const [state, setState] = useState<BuyState>(() =>
    userId && pendingPurchases.get(userId, saleId) ? { phase: 'resuming' } : { phase: 'idle' },
  );
  const inFlight = useRef(false);
  // Read at call time, so a caller's inline callback does not make `run` (and the resume effect) new each render.
  const onAcceptedRef = useRef(onAccepted);
  const admissionRef = useRef(admission);
  useEffect(() => {
    onAcceptedRef.current = onAccepted;
    admissionRef.current = admission;
  });
  const queryClient = useQueryClient();

  const run = useCallback(
    async (quantity: number, resuming: boolean, context?: string) => {
      if (!userId || !jwt || inFlight.current) return;
      inFlight.current = true;
      try {
        let pending = pendingPurchases.get(userId, saleId);
        if (!pending) {
          if (resuming) return setState({ phase: 'idle' }); // it expired meanwhile: nothing to finish
          setState({ phase: 'requesting-token' });
          const submitToken = await retryingAfterWaits(
            () => api.fetchSubmitToken(saleId, jwt, admissionRef.current?.pass),
            (seconds) => setState({ phase: 'waiting', seconds }),
          );
          pending = { token: submitToken.token, expiresAt: submitToken.expiresAt, quantity };
          pendingPurchases.save(userId, saleId, pending);
        }
        if (!resuming) setState({ phase: 'purchasing' });
        const { token, quantity: pendingQuantity } = pending;
        const order = await retryingAfterWaits(
          () => api.purchase(saleId, token, pendingQuantity, jwt),
          (seconds) => setState({ phase: 'waiting', seconds }),
        );
        pendingPurchases.clear(userId, saleId);
        setState({ phase: 'accepted', order });
        onAcceptedRef.current?.(order);
      } catch (error) {
        const admission = admissionRef.current;
        if (admission && isApiError(error, ErrorCode.AdmissionRequired)) {
          // The pass is no longer good (it expired): nothing was bought, and the room takes over again.
          setState({ phase: 'idle' });
          return admission.onRequired();
        }
        const unknown = outcomeUnknown(error);
        if (!unknown) pendingPurchases.clear(userId, saleId);
        if (isApiError(error, ErrorCode.Unauthenticated)) sessionStore.setGuest(null); // expired sign-in
        setState({ phase: 'refused', error, outcomeUnknown: unknown, context });
      } finally {
        inFlight.current = false;
        // Whatever happened, the stock count and the shopper's orders may have moved.
        void queryClient.invalidateQueries({ queryKey: queryKeys.sale(saleId) });
        if (userId) void queryClient.invalidateQueries({ queryKey: queryKeys.orders(userId) });
      }
    },
    [saleId, userId, jwt, queryClient],
  );

  // Once per sale and shopper: finish a purchase a reload interrupted.
  useEffect(() => {
    // Resuming sets state only after the replay's network answer (the phase starts as 'resuming'),
    // so this effect cannot cascade renders; the rule cannot see through `run`'s branches.
    // eslint-disable-next-line react-hooks/set-state-in-effect
    if (userId && pendingPurchases.get(userId, saleId)) void run(1, true);
  }, [run, saleId, userId]);

  const buy = useCallback((quantity = 1, context?: string) => run(quantity, false, context), [run]);
  const busy =
    state.phase === 'requesting-token' ||
    state.phase === 'purchasing' ||
    state.phase === 'resuming' ||
    state.phase === 'waiting';
  return { state, buy, busy, reset: () => setState({ phase: 'idle' }) };
}
