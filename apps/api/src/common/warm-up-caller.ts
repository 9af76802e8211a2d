import { randomBytes, randomInt } from 'node:crypto';
import { REDIS_BACKED_STRATEGIES, type SaleDefinition, WARM_UP_SALE_ID } from '@flash-sale/domain';
import type { FastifyRequest } from 'fastify';

const WARM_UP_CALLER_PREFIX = 'warm-up-';

/**
 * Who the startup warm-up buys as (ops/startup-warm-up.ts): a guest id no sign-in ever gives (those are
 * `u_<ulid>`), in a token only the API signs, so no outside request can pass for the warm-up. Its
 * requests are left out of the access log and the purchase metrics. Under the cluster entry a process's
 * warm-up may be answered by another process: the prefix, not this process's id, is what they recognise.
 */
export const WARM_UP_CALLER_ID = `${WARM_UP_CALLER_PREFIX}${randomBytes(8).toString('hex')}`;

export function isWarmUpRequest(request: FastifyRequest): boolean {
  return request.user?.id.startsWith(WARM_UP_CALLER_PREFIX) === true;
}

/**
 * The sales the warm-up rehearses a purchase's success path in (ops/purchase-rehearsal.ts): ids from
 * here up to just below WARM_UP_SALE_ID, which no sale ever reaches (ids count up from 1). Compared as
 * strings of the same length, which orders them as numbers.
 */
const REHEARSAL_SALE_IDS_FROM = '9223372036854000000';
const REHEARSAL_SALE_IDS = Number(BigInt(WARM_UP_SALE_ID) - BigInt(REHEARSAL_SALE_IDS_FROM));

/** Units a rehearsal sale is leased: more than a warm-up ever buys, so it never asks MySQL for a top-up. */
export const REHEARSAL_UNITS = 1_000_000_000;

/** The ids rehearsal sales take: from `from` (included) to `to` (excluded), compared as numbers. */
export const REHEARSAL_SALE_ID_RANGE = { from: REHEARSAL_SALE_IDS_FROM, to: WARM_UP_SALE_ID } as const;

/** A new rehearsal sale's id, one per warm-up: processes warming at once each rehearse in their own. */
export function newRehearsalSaleId(): string {
  return (BigInt(REHEARSAL_SALE_IDS_FROM) + BigInt(randomInt(REHEARSAL_SALE_IDS))).toString();
}

/** True for a rehearsal sale's id: a purchase in it is off the books (no metric, no nudge of the writers). */
export function isRehearsalSale(saleId: string): boolean {
  return saleId.length === 19 && saleId >= REHEARSAL_SALE_IDS_FROM && saleId < WARM_UP_SALE_ID;
}

/**
 * The rehearsal sale `saleId` names, for the warm-up's callers only: to everyone else it does not exist
 * (404). It lives in Redis alone, for as long as its warm-up runs: open since the epoch, one unit per
 * buyer, sold from Redis in one bucket (the rehearsal leases its units there), like the default sale.
 */
export function rehearsalSaleFor(saleId: string, userId: string): SaleDefinition | undefined {
  if (!isRehearsalSale(saleId) || !userId.startsWith(WARM_UP_CALLER_PREFIX)) return undefined;
  // Every field written out, in the order libs/db's saleDefinitionOf writes a real sale's: the same
  // object shape, so the code the rehearsal compiles stays compiled for real sales (V8 gives objects
  // built alike one hidden class; a spread would give another, and the first real sale would then undo
  // the purchase path's optimized code).
  return {
    id: saleId,
    name: 'Startup warm-up rehearsal',
    description: null,
    imageUrl: null,
    priceCents: 100,
    stock: REHEARSAL_UNITS,
    perUserLimit: 1,
    startsAt: REHEARSAL_STARTS_AT,
    endsAt: REHEARSAL_ENDS_AT,
    strategy: REDIS_BACKED_STRATEGIES[0]!,
    paymentTimeoutSeconds: 600,
    purpose: 'bench',
    buckets: 1,
    waitingRoom: null,
  };
}

const REHEARSAL_STARTS_AT = new Date(0);
const REHEARSAL_ENDS_AT = new Date('9999-12-31T00:00:00Z');
