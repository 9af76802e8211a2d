import {
  type CreateSaleRequest,
  type Sale,
  SALE_DEFAULTS,
  WAITING_ROOM_DEFAULTS,
  type WaitingRoomRequest,
  type WaitingRoomSettings,
} from '@flash-sale/contract';
import {
  DomainError,
  ErrorCode,
  maxBucketsOf,
  type NewSaleDefinition,
  REDIS_BACKED_STRATEGIES,
  type SaleDefinition,
  saleStatus,
  sellsFromRedis,
} from '@flash-sale/domain';

/**
 * The HTTP boundary of a sale: the one mapping of a create request to the domain's new sale, and of
 * a sale to the contract's `Sale` (docs/architecture.md "Adding a sale field").
 */

/**
 * A create request as the new sale it asks for: SALE_DEFAULTS for what it leaves out, and the rules
 * that the strategy's stock decides (SALE_STRATEGY_STOCK): only a sale Redis sells from is spread over
 * buckets, `defaultBuckets` of them when the request does not say (SALE_BUCKETS_DEFAULT).
 */
export function newSaleOf(request: CreateSaleRequest, defaultBuckets: number, now = new Date()): NewSaleDefinition {
  const startsAt = request.startsAt ? new Date(request.startsAt) : now;
  const endsAt = new Date(request.endsAt);
  if (endsAt <= startsAt) throw new DomainError(ErrorCode.ValidationFailed, 'endsAt must be after startsAt');
  const strategy = request.strategy ?? SALE_DEFAULTS.strategy;
  if (request.buckets !== undefined && request.buckets > maxBucketsOf(strategy)) {
    throw new DomainError(
      ErrorCode.ValidationFailed,
      `buckets applies to ${REDIS_BACKED_STRATEGIES.join(', ')} sales only`,
    );
  }
  return {
    name: request.name,
    description: request.description ?? null,
    imageUrl: request.imageUrl ?? null,
    priceCents: request.priceCents,
    stock: request.stock,
    perUserLimit: request.perUserLimit ?? SALE_DEFAULTS.perUserLimit,
    startsAt,
    endsAt,
    strategy,
    paymentTimeoutSeconds: request.paymentTimeoutSeconds ?? SALE_DEFAULTS.paymentTimeoutSeconds,
    purpose: request.purpose ?? SALE_DEFAULTS.purpose,
    buckets: sellsFromRedis(strategy) ? (request.buckets ?? defaultBuckets) : 1,
    waitingRoom: roomSettings(request.waitingRoom),
  };
}

/** A sale as every sale route answers it, with the units it has left now. */
export function saleView(sale: SaleDefinition, remaining: number, now = new Date()): Sale {
  return {
    id: sale.id,
    name: sale.name,
    description: sale.description,
    imageUrl: sale.imageUrl,
    priceCents: sale.priceCents,
    stock: sale.stock,
    remaining,
    perUserLimit: sale.perUserLimit,
    startsAt: sale.startsAt.toISOString(),
    endsAt: sale.endsAt.toISOString(),
    strategy: sale.strategy,
    paymentTimeoutSeconds: sale.paymentTimeoutSeconds,
    status: saleStatus(sale, remaining, now),
    purpose: sale.purpose,
    buckets: sale.buckets,
    waitingRoom: sale.waitingRoom,
  };
}

/** A room as stored and shown: the request with its defaults filled in, or null for none. */
export function roomSettings(request: WaitingRoomRequest | null | undefined): WaitingRoomSettings | null {
  if (!request) return null;
  return {
    admitPerSecond: request.admitPerSecond,
    ...(request.maxShopping === undefined ? {} : { maxShopping: request.maxShopping }),
    passSeconds: request.passSeconds ?? WAITING_ROOM_DEFAULTS.passSeconds,
  };
}
