/**
 * A purchase whose outcome is not known yet: its submit token was fetched (and maybe sent), but no
 * definitive answer came back — the request is in flight, the network dropped, the server answered
 * 5xx, or the shopper reloaded the page mid-click.
 *
 * Keeping the token is what makes every retry safe: the API treats a purchase with a token that
 * already succeeded as a replay and answers the same order (docs/api.md "Buying"), so retrying with it can
 * never buy a second unit. It lives in localStorage so a reload or a second tab finds it, and is
 * dropped as soon as the API gives a definitive answer or the token expires.
 */
export interface PendingPurchase {
  token: string;
  expiresAt: string;
  quantity: number;
}

const keyOf = (userId: string, saleId: string) => `flashbuy.pending.${userId}.${saleId}`;

export const pendingPurchases = {
  get(userId: string, saleId: string, now = Date.now()): PendingPurchase | null {
    const raw = localStorage.getItem(keyOf(userId, saleId));
    if (!raw) return null;
    try {
      const pending = JSON.parse(raw) as PendingPurchase;
      // A token about to expire would only earn TOKEN_INVALID; a fresh one is cheap.
      if (Date.parse(pending.expiresAt) - now > 2_000) return pending;
    } catch {
      // unreadable: forget it
    }
    localStorage.removeItem(keyOf(userId, saleId));
    return null;
  },

  save(userId: string, saleId: string, pending: PendingPurchase): void {
    localStorage.setItem(keyOf(userId, saleId), JSON.stringify(pending));
  },

  clear(userId: string, saleId: string): void {
    localStorage.removeItem(keyOf(userId, saleId));
  },
};
