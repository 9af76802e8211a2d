/**
 * The API as the k6 shapes' buyers and admin call it, over undici: every request's latency by endpoint
 * and every answer by status, recorded for the run's report.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request } from 'undici';

export const BASE_URL = (process.env.BASE_URL || 'http://localhost:3000').replace(/\/+$/, '');
const ADMIN_PASSWORD = process.env.ADMIN_PASSWORD || 'admin';
/** One connection per buyer in flight, as k6 gives one VU each. */
export const agent = new Agent({ connections: 2000, pipelining: 1, keepAliveTimeout: 10_000 });

/** Every request's latency by endpoint, and answers by status. */
export function recorder() {
  const latencies = {};
  const statuses = {};
  return {
    latencies,
    statuses,
    async call(endpoint, method, url, { token, json } = {}) {
      const headers = { 'content-type': 'application/json' };
      if (token) headers.authorization = `Bearer ${token}`;
      const started = performance.now();
      let status = 0;
      let body;
      let retryAfter;
      try {
        const answer = await request(`${BASE_URL}${url}`, {
          method,
          headers,
          body: method === 'POST' ? JSON.stringify(json ?? {}) : undefined,
          dispatcher: agent,
          headersTimeout: 30_000,
          bodyTimeout: 30_000,
        });
        status = answer.statusCode;
        retryAfter = Number(answer.headers['retry-after']) || undefined;
        const text = await answer.body.text();
        body = text ? JSON.parse(text) : undefined;
      } catch (error) {
        body = { error: { code: 'NETWORK', message: String(error.message ?? error) } };
      }
      (latencies[endpoint] ??= []).push(performance.now() - started);
      statuses[status] = (statuses[status] ?? 0) + 1;
      return { status, body, retryAfter };
    },
  };
}

export async function admin(rec) {
  const answer = await rec.call('auth_admin', 'POST', '/api/auth/admin', { json: { password: ADMIN_PASSWORD } });
  if (answer.status !== 201) throw new Error(`admin sign-in answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  return answer.body.token;
}

export async function createSale(rec, token, { name, stock, strategy, startsInS = 0 }) {
  const startsAt = new Date(Date.now() + startsInS * 1000);
  const answer = await rec.call('create_sale', 'POST', '/api/admin/sales', {
    token,
    json: {
      name,
      priceCents: 4999,
      stock,
      perUserLimit: 1,
      strategy,
      startsAt: startsAt.toISOString(),
      endsAt: new Date(startsAt.getTime() + 3_600_000).toISOString(),
      purpose: 'load-test',
    },
  });
  if (answer.status !== 201)
    throw new Error(`creating the sale answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  return answer.body;
}

export async function auditWhenQuiet(rec, token, saleId) {
  for (let i = 0; i < 120; i++) {
    const answer = await rec.call('audit', 'GET', `/api/admin/sales/${saleId}/audit`, { token });
    if (answer.status === 200 && answer.body.ordersByStatus.QUEUED === 0) return answer.body;
    await sleep(500);
  }
  throw new Error(`sale ${saleId}: queue not drained after 60 s`);
}
