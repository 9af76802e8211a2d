/** The API as an operator and a buyer use it: JSON over HTTP, through its public routes only. */
import { setTimeout as sleep } from 'node:timers/promises';
import { httpClient } from '../../scripts/lib/http-client.mjs';
import { ADMIN_PASSWORD } from './settings.mjs';

export { httpClient };

/** Signed in as the admin: sales are created and audited through the admin API, like an operator would. */
export async function adminSales(http) {
  const admin = (await http.post('/api/auth/admin', { password: ADMIN_PASSWORD }, undefined, 201)).token;
  /**
   * A sale open now, ending in an hour, whose orders wait an hour for payment: a full run lasts longer
   * than the default 10 minutes, and the worker expiring the first scenarios' orders would work through
   * the later ones (the idle worker's above all). `options`: more fields of the create-sale body.
   */
  const saleBody = (name, stock, strategy, options) => ({
    name,
    priceCents: 1999,
    stock,
    perUserLimit: 1,
    strategy,
    endsAt: new Date(Date.now() + 3_600_000).toISOString(),
    paymentTimeoutSeconds: 3_600,
    purpose: 'bench', // test data: the storefront does not list it
    ...options,
  });
  return {
    create: (name, stock, strategy = 'redis-lua', options = {}) =>
      http.post('/api/admin/sales', saleBody(name, stock, strategy, options), admin, 201),
    /** Like `create`, but whatever the API answers comes back as `{ status, body }`: a refusal is a result. */
    tryCreate: (name, stock, strategy = 'redis-lua', options = {}) =>
      http.answer(
        'POST',
        '/api/admin/sales',
        JSON.stringify(saleBody(name, stock, strategy, options)),
        `Bearer ${admin}`,
      ),
    /** The bench's own sales as the admin list shows them (the storefront's list hides test data). */
    listOwn: () => http.get('/api/admin/sales?purpose=bench', admin),
    /** The audit's verdict and counts (not its details). */
    audit: async (saleId) => {
      const audit = await http.get(`/api/admin/sales/${saleId}/audit`, admin);
      const { ok, oversold, oversoldPeak, duplicateOrders, lostReservations, stock, remaining, held, ordersByStatus } =
        audit;
      return { ok, oversold, oversoldPeak, duplicateOrders, lostReservations, stock, remaining, held, ordersByStatus };
    },
  };
}

/** A purchase that must be accepted. A 429/503 with retry-after means "nothing happened, send again" (docs/api.md). */
export async function purchaseAccepted(baseUrl, saleId, body, authorization) {
  for (let attempt = 1; ; attempt++) {
    const response = await fetch(`${baseUrl}/api/sales/${saleId}/purchase`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization },
      body,
    });
    const text = await response.text();
    if (response.status === 202) return;
    const retryAfter = response.headers.get('retry-after');
    if ([429, 503].includes(response.status) && retryAfter !== null && attempt < 5) {
      await sleep(Math.max(100, Number(retryAfter) * 1000 || 0));
      continue;
    }
    throw new Error(`POST /api/sales/${saleId}/purchase answered ${response.status}: ${text}`);
  }
}
