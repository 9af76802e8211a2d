// What the contract's answers look like (docs/api.md), checked field by field by the k6 client (api.ts):
// a body of the right status and the wrong shape is a broken contract, counted as such.
import type { RefinedResponse } from 'k6/http';
import { ErrorCode } from '../../libs/contract/src/error-code.ts';
import { ORDER_STATUSES } from '../../libs/contract/src/order.ts';
import type { PurchaseAccepted } from '../../libs/contract/src/purchase.ts';
import type { SaleStrategy } from '../../libs/contract/src/sale.ts';
import type { ApiError, PurchaseOutcome } from './api.ts';

export type Json = Record<string, unknown>;

export function parse(res: RefinedResponse<'text'>): unknown {
  return parseJson(res.body);
}

/** A body's JSON; undefined when it is empty or not JSON. */
export function parseJson(text: unknown): unknown {
  if (typeof text !== 'string' || text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

export function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function hasStrings(value: Json, ...keys: string[]): boolean {
  return keys.every((key) => typeof value[key] === 'string' && value[key] !== '');
}

export function hasIntegers(value: Json, ...keys: string[]): boolean {
  return keys.every((key) => Number.isInteger(value[key]));
}

export function errorOf(body: unknown): ApiError {
  if (isObject(body) && isObject(body.error) && typeof body.error.code === 'string') {
    return { code: body.error.code, message: typeof body.error.message === 'string' ? body.error.message : '' };
  }
  return { code: '', message: '' };
}

/** A `retry-after` header in seconds; undefined unless a positive number. */
export function retryAfterSeconds(header: unknown): number | undefined {
  const seconds = Number(header);
  return Number.isFinite(seconds) && seconds > 0 ? seconds : undefined;
}

/** What a strategy answers an accepted purchase (docs/api.md). */
export interface ExpectedPurchase {
  status: 201 | 202;
  orderStatus: PurchaseAccepted['status'];
}

export function expectedPurchase(strategy: SaleStrategy): ExpectedPurchase {
  return strategy === 'redis-lua'
    ? { status: 202, orderStatus: 'QUEUED' }
    : { status: 201, orderStatus: 'PENDING_PAYMENT' };
}

/**
 * A purchase answer against docs/api.md: `expected` is the strategy's acceptance; the refusals a flash
 * sale is expected to produce are 410 SOLD_OUT and 409 LIMIT_REACHED, a "retry later" is 429/503 with
 * `retry-after` (1 s when it names none); anything else is unexpected (`failure`: why no answer came).
 */
export function purchaseOutcome(
  answer: { status: number; body: unknown; retryAfterSeconds?: number },
  expected: ExpectedPurchase,
  failure = '',
): PurchaseOutcome {
  const { status, body } = answer;
  if (status === expected.status) {
    // A fresh purchase's order is `expected.orderStatus`; a replay answers its order as it is now, written,
    // paid, cancelled or expired since (docs/api.md "Buying"): any order status.
    if (isObject(body) && hasStrings(body, 'orderNo') && isOrderStatus(body.status)) {
      return { kind: 'accepted', orderNo: body.orderNo as string, status };
    }
    return { kind: 'unexpected', status, code: '', message: 'body is not {orderNo, status: <an order status>}' };
  }
  const error = errorOf(body);
  if (status === 410 && error.code === ErrorCode.SoldOut) return { kind: 'sold_out', status: 410 };
  if (status === 409 && error.code === ErrorCode.LimitReached) return { kind: 'limit_reached', status: 409 };
  if (status === 409 && error.code === ErrorCode.SaleNotStarted) return { kind: 'not_started', status: 409 };
  if (
    (status === 429 && error.code === ErrorCode.RateLimited) ||
    (status === 503 && error.code === ErrorCode.Unavailable)
  ) {
    return { kind: 'retry_later', status, code: error.code, retryAfterSeconds: answer.retryAfterSeconds ?? 1 };
  }
  return { kind: 'unexpected', status, code: error.code, message: error.message || failure || `HTTP ${status}` };
}

export const isSession = (b: Json): boolean => hasStrings(b, 'token') && isObject(b.user) && hasStrings(b.user, 'id');
export const isSale = (b: Json): boolean =>
  hasStrings(b, 'id', 'name', 'startsAt', 'endsAt', 'strategy', 'status') &&
  hasIntegers(b, 'priceCents', 'stock', 'remaining', 'perUserLimit');
const isOrderStatus = (value: unknown): boolean => (ORDER_STATUSES as readonly unknown[]).includes(value);
export const isOrder = (b: Json): boolean =>
  hasStrings(b, 'orderNo', 'saleId', 'userId', 'createdAt') &&
  hasIntegers(b, 'quantity', 'amountCents') &&
  isOrderStatus(b.status);
export const isRoomState = (b: Json): boolean =>
  hasIntegers(b, 'waiting', 'admitted', 'shopping') &&
  typeof b.admitPerSecond === 'number' &&
  typeof b.measuredAdmitPerSecond === 'number';
export const isAudit = (b: Json): boolean =>
  hasStrings(b, 'saleId') &&
  hasIntegers(b, 'stock', 'remaining', 'held', 'oversold', 'oversoldPeak', 'duplicateOrders', 'lostReservations') &&
  typeof b.ok === 'boolean' &&
  isObject(b.ordersByStatus) &&
  hasIntegers(b.ordersByStatus, ...ORDER_STATUSES);
