import type {
  AdminSession,
  CreateSaleRequest,
  ErrorBody,
  PurchaseAccepted,
  Sale,
  Session,
  SubmitToken,
} from '@flash-sale/contract';
import { Agent, request } from 'undici';
import { waitFor } from './fixtures';

export interface ApiResponse<T = unknown> {
  status: number;
  body: T;
  headers: Record<string, string | string[] | undefined>;
}

/** A thin HTTP client for the API under test: raw status, parsed body, headers. */
export class ApiClient {
  private readonly agent: Agent;

  /** `localAddress` (e.g. 127.0.0.2) makes the API see another client IP: loopback answers all of 127/8. */
  constructor(
    readonly baseUrl: string,
    connections = 128,
    localAddress?: string,
  ) {
    this.agent = new Agent({ connections, pipelining: 1, ...(localAddress ? { localAddress } : {}) });
  }

  async call<T = unknown>(
    method: 'GET' | 'POST' | 'PATCH',
    path: string,
    options: { token?: string; json?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
  ): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token) headers['authorization'] = `Bearer ${options.token}`;
    let body: string | undefined;
    if (options.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(options.json);
    } else if (options.rawBody !== undefined) {
      headers['content-type'] ??= 'application/json';
      body = options.rawBody;
    }
    const response = await request(`${this.baseUrl}${path}`, { method, headers, body, dispatcher: this.agent });
    const text = await response.body.text();
    return { status: response.statusCode, body: (text ? JSON.parse(text) : undefined) as T, headers: response.headers };
  }

  /** For answers that are not JSON (HTML, Prometheus text, redirects): the body as text; never follows redirects. */
  async raw(
    method: 'GET' | 'POST',
    path: string,
    options: { token?: string; headers?: Record<string, string> } = {},
  ): Promise<{ status: number; text: string; headers: Record<string, string | string[] | undefined> }> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token) headers['authorization'] = `Bearer ${options.token}`;
    const response = await request(`${this.baseUrl}${path}`, { method, headers, dispatcher: this.agent });
    return { status: response.statusCode, text: await response.body.text(), headers: response.headers };
  }

  /**
   * A call as a client makes it: a `503` with `retry-after` means "nothing happened" (docs/api.md), so it
   * is sent again after that time, a few times at most. A loaded machine sheds load this way; the set-up
   * steps of a test (sign-ins, tokens) must not fail on it.
   */
  async callRetryingAfter<T = unknown>(
    method: 'GET' | 'POST' | 'PATCH',
    path: string,
    options: { token?: string; json?: unknown } = {},
    attempts = 5,
  ): Promise<ApiResponse<T>> {
    for (let attempt = 1; ; attempt++) {
      const response = await this.call<T>(method, path, options);
      const retryAfter = Number(response.headers['retry-after']);
      if (response.status !== 503 || !retryAfter || attempt === attempts) return response;
      await new Promise((resolve) => setTimeout(resolve, retryAfter * 1000));
    }
  }

  async adminToken(password: string): Promise<string> {
    const response = await this.callRetryingAfter<AdminSession>('POST', '/api/auth/admin', { json: { password } });
    if (response.status !== 201) throw new Error(`admin sign-in failed: ${response.status}`);
    return response.body.token;
  }

  async guest(name?: string): Promise<{ token: string; userId: string }> {
    const response = await this.callRetryingAfter<Session>('POST', '/api/auth/guest', {
      json: name ? { name } : {},
    });
    if (response.status !== 201) throw new Error(`guest sign-in failed: ${response.status}`);
    return { token: response.body.token, userId: response.body.user.id };
  }

  async submitToken(saleId: string, guestToken: string): Promise<string> {
    const response = await this.callRetryingAfter<SubmitToken>('POST', `/api/sales/${saleId}/tokens`, {
      token: guestToken,
    });
    if (response.status !== 201) throw new Error(`token request failed: ${response.status}`);
    return response.body.token;
  }

  /** `count` guests signed in, at most `inFlight` sign-ins at once. */
  async guests(count: number, inFlight: number): Promise<{ token: string; userId: string }[]> {
    return inBatches(
      Array.from({ length: count }, (_, i) => i),
      inFlight,
      () => this.guest(),
    );
  }

  /** Waits until the worker has written the order (`PENDING_PAYMENT`), as its buyer reads it; returns it. */
  async orderWritten(
    orderNo: string,
    buyerToken: string,
    timeoutMs?: number,
  ): Promise<ApiResponse<{ orderNo: string; status: string; userId: string }>> {
    return waitFor(
      `order ${orderNo} written`,
      () =>
        this.call<{ orderNo: string; status: string; userId: string }>('GET', `/api/orders/${orderNo}`, {
          token: buyerToken,
        }),
      (response) => response.body.status === 'PENDING_PAYMENT',
      timeoutMs,
    );
  }

  /**
   * `POST /api/admin/sales` with what a test does not care about filled in (a live sale for an hour);
   * throws unless it answers 201.
   */
  async createSale(adminToken: string, fields: Partial<CreateSaleRequest> = {}): Promise<Sale> {
    // A 503 + retry-after here is a loaded machine's (or a restarted Redis's) "try again": a test's
    // set-up step retries as an admin would; at worst a second sale is left unused in the test database.
    const response = await this.callRetryingAfter<Sale>('POST', '/api/admin/sales', {
      token: adminToken,
      json: { name: 'Test sale', priceCents: 100, stock: 10, endsAt: inAnHour(), ...fields },
    });
    if (response.status !== 201)
      throw new Error(`sale creation failed: ${response.status} ${JSON.stringify(response.body)}`);
    return response.body;
  }

  /** One purchase with a fresh submit token, answered as it is (202/201 or a refusal). */
  async buy(saleId: string, guestToken: string, quantity?: number): Promise<ApiResponse<PurchaseAnswer>> {
    const token = await this.submitToken(saleId, guestToken);
    return this.call<PurchaseAnswer>('POST', `/api/sales/${saleId}/purchase`, {
      token: guestToken,
      json: quantity === undefined ? { token } : { token, quantity },
    });
  }

  /**
   * A purchase as the storefront sends it: a `503` with `retry-after` means "nothing happened" (units
   * kept going to others, load shedding, an outage), so the same token is sent again after it, a few
   * times at most.
   */
  async purchaseAsStorefront<T = { orderNo?: string; status?: string; error?: { code: string } }>(
    saleId: string,
    guestToken: string,
    submitToken: string,
    attempts = 5,
  ): Promise<ApiResponse<T>> {
    return this.callRetryingAfter<T>(
      'POST',
      `/api/sales/${saleId}/purchase`,
      { token: guestToken, json: { token: submitToken } },
      attempts,
    );
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}

/** A purchase's answer: accepted, or refused with the contract's error body. */
export type PurchaseAnswer = PurchaseAccepted & Partial<ErrorBody>;

/** An ISO time an hour from now: a sale's `endsAt` that no test outlives. */
export const inAnHour = (): string => new Date(Date.now() + 3_600_000).toISOString();

/** Runs `task` over `items` with at most `limit` in flight (sign-ins before the burst). */
export async function inBatches<T, R>(items: readonly T[], limit: number, task: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await task(items[index]!);
      }
    }),
  );
  return results;
}
