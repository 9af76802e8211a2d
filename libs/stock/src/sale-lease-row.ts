import type { SaleLeaseRow } from '@flash-sale/db';
import { type SaleLayout, sellsFromRedis } from '@flash-sale/domain';

/** The Redis layout of a sale read from its row. */
export function layoutOf(saleId: string, sale: SaleLeaseRow): SaleLayout {
  return { id: saleId, buckets: sale.buckets };
}

/** Over: it sells nothing more, and nothing is leased to it any more. */
export function hasEnded(sale: SaleLeaseRow, now = Date.now()): boolean {
  return sale.endsAt.getTime() <= now;
}

/** MySQL's `redis_epoch` of a sale whose first incarnation has not been opened yet. */
export const NEVER_OPENED = 0;

/** A sale whose strategy sells leased units from Redis (SALE_STRATEGY_STOCK), opened or not. */
export function sellsFromLeases(sale: SaleLeaseRow | undefined): sale is SaleLeaseRow {
  return sale !== undefined && sellsFromRedis(sale.strategy);
}

/** Sold by Redis on an incarnation MySQL has opened. */
export function isRedisBacked(sale: SaleLeaseRow | undefined): sale is SaleLeaseRow {
  return sale !== undefined && sellsFromLeases(sale) && sale.redisEpoch !== NEVER_OPENED;
}
