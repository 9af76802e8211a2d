// A small typed client for the HTTP contract (docs/api.md), for k6.
//
// Every call is tagged `endpoint:<name>` and `name:<METHOD route>` (the route with `:id`, so sale ids and
// order numbers do not explode the number of time series), and each answer is checked against the
// contract: the status the contract promises *and* the body shape. Anything else comes back as
// `{ ok: false }` with the status and the API's error code, for the caller to count.
import http, { type ObjectBatchRequest, type Params, type RefinedResponse } from 'k6/http';
import type { Audit } from '../../libs/contract/src/audit.ts';
import type { LockHolderPauseArmed } from '../../libs/contract/src/demo-run.ts';
import type { Session as SessionAnswer } from '../../libs/contract/src/auth.ts';
import { ErrorCode } from '../../libs/contract/src/error-code.ts';
import type { Order } from '../../libs/contract/src/order.ts';
import type { SubmitToken } from '../../libs/contract/src/purchase.ts';
import type { CreateSaleRequest, Sale, SaleStrategy } from '../../libs/contract/src/sale.ts';
import type { WaitingRoomState } from '../../libs/contract/src/waiting-room.ts';
import {
  errorOf,
  expectedPurchase,
  hasStrings,
  isAudit,
  isObject,
  isOrder,
  isRoomState,
  isSale,
  isSession,
  type Json,
  parse,
  purchaseOutcome,
  retryAfterSeconds,
} from './answer-shapes.ts';
import { recordTimeline } from './timeline.ts';

/** The value of the `endpoint` tag of every call: the report's latency per endpoint. */
export const ENDPOINTS = [
  'auth_guest',
  'auth_admin',
  'create_sale',
  'get_sale',
  'token',
  'purchase',
  'get_order',
  'pay',
  'cancel',
  'audit',
  'pause_lock_holder',
  'queue_join',
  'queue_poll',
  'queue_state',
] as const;
export type Endpoint = (typeof ENDPOINTS)[number];

const ROUTES: Record<Endpoint, string> = {
  auth_guest: 'POST /api/auth/guest',
  auth_admin: 'POST /api/auth/admin',
  create_sale: 'POST /api/admin/sales',
  get_sale: 'GET /api/sales/:id',
  token: 'POST /api/sales/:id/tokens',
  purchase: 'POST /api/sales/:id/purchase',
  get_order: 'GET /api/orders/:orderNo',
  pay: 'POST /api/orders/:orderNo/pay',
  cancel: 'POST /api/orders/:orderNo/cancel',
  audit: 'GET /api/admin/sales/:id/audit',
  pause_lock_holder: 'POST /api/admin/sales/:id/pause-lock-holder',
  queue_join: 'POST /api/sales/:id/queue',
  queue_poll: 'GET /api/sales/:id/queue',
  queue_state: 'GET /api/admin/sales/:id/queue',
};

// --- The contract's types (libs/contract, after docs/api.md) that only k6 has --------------------------

/** The `error` of an error answer, as k6 reads it: an empty code when the body is not one. */
export interface ApiError {
  code: string;
  message: string;
}

/** A signed-in guest, as the scenarios carry it. */
export interface Session {
  token: string;
  userId: string;
  name: string;
}

// --- Results -----------------------------------------------------------------------------------

export type Result<T> =
  | { ok: true; value: T; status: number; res: RefinedResponse<'text'> }
  | { ok: false; status: number; code: string; message: string; res: RefinedResponse<'text'> };

export type PurchaseOutcome =
  | { kind: 'accepted'; orderNo: string; status: number }
  | { kind: 'sold_out'; status: 410 }
  | { kind: 'limit_reached'; status: 409 }
  /** 409 SALE_NOT_STARTED: the buyer's clock ran ahead of the API's; the token is still good. */
  | { kind: 'not_started'; status: 409 }
  /**
   * `429 RATE_LIMITED` or `503 UNAVAILABLE`: "nothing happened, send the same token again after
   * `retry-after` seconds" (db-optimistic's answer when its bounded retries run out, load shedding).
   */
  | { kind: 'retry_later'; status: 429 | 503; code: string; retryAfterSeconds: number }
  | { kind: 'unexpected'; status: number; code: string; message: string };

// --- The client --------------------------------------------------------------------------------

/** Statuses that are answers of the contract, not failures, for k6's `http_req_failed`. */
const PURCHASE_STATUSES = http.expectedStatuses(201, 202, 409, 410);

export class Api {
  constructor(
    readonly baseUrl: string,
    private readonly timeout = '30s',
  ) {}

  params(endpoint: Endpoint, token?: string, extra: Params = {}): Params {
    const headers: Record<string, string> = { 'content-type': 'application/json', ...extra.headers };
    if (token) headers['authorization'] = `Bearer ${token}`;
    return {
      timeout: this.timeout,
      ...extra,
      headers,
      tags: { endpoint, name: ROUTES[endpoint], ...extra.tags },
    };
  }

  private call<T>(
    endpoint: Endpoint,
    method: 'GET' | 'POST',
    path: string,
    expected: number,
    valid: (body: Json) => boolean,
    options: { token?: string; json?: unknown; tags?: Record<string, string> } = {},
  ): Result<T> {
    const body = method === 'POST' ? JSON.stringify(options.json ?? {}) : null;
    const res = http.request(
      method,
      `${this.baseUrl}${path}`,
      body,
      this.params(endpoint, options.token, { responseType: 'text', tags: options.tags }),
    ) as RefinedResponse<'text'>;
    recordTimeline(res.timings.duration);
    return this.read<T>(res, expected, valid);
  }

  /** An answer against the contract: `expected` status and a body `valid` accepts, else the error it carries. */
  private read<T>(res: RefinedResponse<'text'>, expected: number, valid: (body: Json) => boolean): Result<T> {
    const parsed = parse(res);
    if (res.status === expected && isObject(parsed) && valid(parsed)) {
      return { ok: true, value: parsed as T, status: res.status, res };
    }
    const error = errorOf(parsed);
    const message =
      error.message ||
      (res.status === expected ? 'the body does not match the contract' : res.error || `HTTP ${res.status}`);
    return { ok: false, status: res.status, code: error.code, message, res };
  }

  /** `POST /api/auth/guest` → 201 `{token, user: {id, name}}`. */
  guest(name?: string, tags?: Record<string, string>): Result<Session> {
    const result = this.call<SessionAnswer>('auth_guest', 'POST', '/api/auth/guest', 201, isSession, {
      json: name ? { name } : {},
      tags,
    });
    if (!result.ok) return result;
    const { token, user } = result.value;
    return { ...result, value: { token, userId: user.id, name: user.name ?? '' } };
  }

  /** `POST /api/auth/guest` as a request object, to sign many buyers in at once with `http.batch`. */
  guestRequest(name: string, tags?: Record<string, string>): ObjectBatchRequest {
    return {
      method: 'POST',
      url: `${this.baseUrl}/api/auth/guest`,
      body: JSON.stringify({ name }),
      params: this.params('auth_guest', undefined, { responseType: 'text', tags }),
    };
  }

  /** The session a `guestRequest` answered. */
  sessionOf(res: RefinedResponse<'text'>): Result<Session> {
    const result = this.read<SessionAnswer>(res, 201, isSession);
    if (!result.ok) return result;
    const { token, user } = result.value;
    return { ...result, value: { token, userId: user.id, name: user.name ?? '' } };
  }

  /** `POST /api/auth/admin` → 201 `{token}`. */
  admin(password: string): Result<string> {
    const result = this.call<{ token: string }>(
      'auth_admin',
      'POST',
      '/api/auth/admin',
      201,
      (b) => hasStrings(b, 'token'),
      {
        json: { password },
      },
    );
    return result.ok ? { ...result, value: result.value.token } : result;
  }

  /** `POST /api/admin/sales` → 201 Sale. */
  createSale(adminToken: string, input: CreateSaleRequest): Result<Sale> {
    return this.call<Sale>('create_sale', 'POST', '/api/admin/sales', 201, isSale, { token: adminToken, json: input });
  }

  /** `GET /api/sales/:id` → 200 Sale. */
  sale(saleId: string): Result<Sale> {
    return this.call<Sale>('get_sale', 'GET', `/api/sales/${encodeURIComponent(saleId)}`, 200, isSale);
  }

  /** `POST /api/sales/:id/tokens` → 201 `{token, expiresAt}`. */
  submitToken(session: Session, saleId: string, tags?: Record<string, string>): Result<SubmitToken> {
    return this.call<SubmitToken>(
      'token',
      'POST',
      `/api/sales/${encodeURIComponent(saleId)}/tokens`,
      201,
      (b) => hasStrings(b, 'token', 'expiresAt'),
      { token: session.token, tags },
    );
  }

  /** The purchase as a request object, for `http.batch` (parallel clicks) or `purchase()`. */
  purchaseRequest(
    session: Session,
    saleId: string,
    submitToken: string,
    options: { quantity?: number; tags?: Record<string, string> } = {},
  ): ObjectBatchRequest {
    const body: { token: string; quantity?: number } = { token: submitToken };
    if (options.quantity !== undefined) body.quantity = options.quantity;
    return {
      method: 'POST',
      url: `${this.baseUrl}/api/sales/${encodeURIComponent(saleId)}/purchase`,
      body: JSON.stringify(body),
      params: this.params('purchase', session.token, {
        responseType: 'text',
        responseCallback: PURCHASE_STATUSES,
        tags: options.tags,
      }),
    };
  }

  /** `POST /api/sales/:id/purchase`, classified (see `classifyPurchase`). */
  purchase(
    session: Session,
    saleId: string,
    submitToken: string,
    strategy: SaleStrategy,
    options: { quantity?: number; tags?: Record<string, string> } = {},
  ): { outcome: PurchaseOutcome; res: RefinedResponse<'text'> } {
    const request = this.purchaseRequest(session, saleId, submitToken, options);
    const res = http.request(request.method, request.url, request.body, request.params) as RefinedResponse<'text'>;
    recordTimeline(res.timings.duration);
    return { outcome: classifyPurchase(res, strategy), res };
  }

  /** `GET /api/orders/:orderNo` → 200 Order (owner or admin). */
  order(token: string, orderNo: string, tags?: Record<string, string>): Result<Order> {
    return this.call<Order>('get_order', 'GET', `/api/orders/${encodeURIComponent(orderNo)}`, 200, isOrder, {
      token,
      tags,
    });
  }

  /** `POST /api/orders/:orderNo/pay` → 200 Order (PAID). */
  pay(session: Session, orderNo: string, tags?: Record<string, string>): Result<Order> {
    return this.call<Order>('pay', 'POST', `/api/orders/${encodeURIComponent(orderNo)}/pay`, 200, isOrder, {
      token: session.token,
      tags,
    });
  }

  /** `POST /api/orders/:orderNo/cancel` → 200 Order (CANCELLED). */
  cancel(session: Session, orderNo: string, tags?: Record<string, string>): Result<Order> {
    return this.call<Order>('cancel', 'POST', `/api/orders/${encodeURIComponent(orderNo)}/cancel`, 200, isOrder, {
      token: session.token,
      tags,
    });
  }

  /** `GET /api/admin/sales/:id/audit` → 200 Audit. */
  audit(adminToken: string, saleId: string): Result<Audit> {
    return this.call<Audit>('audit', 'GET', `/api/admin/sales/${encodeURIComponent(saleId)}/audit`, 200, isAudit, {
      token: adminToken,
    });
  }

  /** `GET /api/admin/sales/:id/queue` → 200 WaitingRoomState, as a request object for `http.batch`. */
  roomStateRequest(adminToken: string, saleId: string): ObjectBatchRequest {
    return {
      method: 'GET',
      url: `${this.baseUrl}/api/admin/sales/${encodeURIComponent(saleId)}/queue`,
      params: this.params('queue_state', adminToken, { responseType: 'text' }),
    };
  }

  /** The body of a `roomStateRequest` answer, or null when it is not a WaitingRoomState. */
  roomState(res: RefinedResponse<'text'>): WaitingRoomState | null {
    const body = parse(res);
    return res.status === 200 && isObject(body) && isRoomState(body) ? (body as unknown as WaitingRoomState) : null;
  }

  /**
   * `POST /api/admin/sales/:id/pause-lock-holder` → 200 `{saleId, armedUntil}`: the next holder of the
   * sale's lock, on whichever API instance, stops past the lock's TTL between its read and its write.
   */
  pauseLockHolder(adminToken: string, saleId: string): Result<LockHolderPauseArmed> {
    return this.call<LockHolderPauseArmed>(
      'pause_lock_holder',
      'POST',
      `/api/admin/sales/${encodeURIComponent(saleId)}/pause-lock-holder`,
      200,
      (b) => hasStrings(b, 'saleId', 'armedUntil'),
      { token: adminToken },
    );
  }
}

/**
 * A purchase answer against docs/api.md: success is exactly the strategy's status and body (202 QUEUED for
 * redis-lua, 201 PENDING_PAYMENT for the MySQL strategies); answer-shapes.ts's purchaseOutcome says the rest.
 */
export function classifyPurchase(res: RefinedResponse<'text'>, strategy: SaleStrategy): PurchaseOutcome {
  const answer = {
    status: res.status,
    body: parse(res),
    retryAfterSeconds: retryAfterSeconds(res.headers['Retry-After']),
  };
  return purchaseOutcome(answer, expectedPurchase(strategy), res.error);
}

/** A `409 SALE_NOT_STARTED` that outlived its retries: the clocks are too far apart, an unexpected answer. */
export function stillNotStarted(seconds: number): PurchaseOutcome {
  return {
    kind: 'unexpected',
    status: 409,
    code: ErrorCode.SaleNotStarted,
    message: `still not started ${seconds} s after its start time: are the clocks far apart?`,
  };
}

/** Throws (stopping setup or teardown) unless the call kept the contract. */
export function must<T>(result: Result<T>, what: string): T {
  if (result.ok) return result.value;
  const code = result.code ? ` ${result.code}` : '';
  throw new Error(`${what} failed: HTTP ${result.status}${code}: ${result.message}`);
}
