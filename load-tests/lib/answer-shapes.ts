// What the contract's answers look like (docs/api.md), checked field by field by the k6 client (api.ts):
// a body of the right status and the wrong shape is a broken contract, counted as such.
import type { RefinedResponse } from 'k6/http';
import { ORDER_STATUSES } from '../../libs/contract/src/order.ts';
import type { ApiError } from './api.ts';

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

export const isSession = (b: Json): boolean => hasStrings(b, 'token') && isObject(b.user) && hasStrings(b.user, 'id');
export const isSale = (b: Json): boolean =>
  hasStrings(b, 'id', 'name', 'startsAt', 'endsAt', 'strategy', 'status') &&
  hasIntegers(b, 'priceCents', 'stock', 'remaining', 'perUserLimit');
export const isOrder = (b: Json): boolean =>
  hasStrings(b, 'orderNo', 'saleId', 'userId', 'createdAt') &&
  hasIntegers(b, 'quantity', 'amountCents') &&
  (ORDER_STATUSES as readonly unknown[]).includes(b.status);
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
