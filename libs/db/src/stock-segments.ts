import type { EntityManager } from 'typeorm';

/** How many rows a db-segmented sale's stock is split into (fewer when the stock is smaller). */
export const STOCK_SEGMENTS = 8;

/** One segment of a db-segmented sale's stock, with its optimistic-lock version. */
export interface StockSegment {
  segmentNo: number;
  available: number;
  version: number;
}

/** `stock` split into at most STOCK_SEGMENTS near-equal parts (the first ones take the remainder). */
export function segmentSizes(stock: number): number[] {
  const count = Math.max(1, Math.min(STOCK_SEGMENTS, stock));
  return Array.from({ length: count }, (_, i) => Math.floor(stock / count) + (i < stock % count ? 1 : 0));
}

/** The segment a buyer starts at: a stable hash of the buyer (FNV-1a), so buyers spread evenly. */
export function segmentFor(userId: string, count: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < userId.length; i++) hash = Math.imul(hash ^ userId.charCodeAt(i), 0x01000193);
  return (hash >>> 0) % Math.max(1, count);
}

/**
 * A db-segmented sale's unsold units live in `sale_stock_segments` rows (seed 004's 分段, the answer to
 * "too many optimistic conflicts on one row"): buyers spread over the rows and conflict only with the
 * few on the same one. The sale row's `available` holds what is not in a segment — the units cancelled
 * and expired orders give back — so the books read `available` as the row's plus its segments'.
 */
export class StockSegmentRepository {
  async create(manager: EntityManager, saleId: string, stock: number): Promise<void> {
    const sizes = segmentSizes(stock);
    await manager.query(
      `INSERT INTO sale_stock_segments (sale_id, segment_no, available) VALUES ${sizes.map(() => '(?, ?, ?)').join(', ')}`,
      sizes.flatMap((units, segmentNo) => [saleId, segmentNo, units]),
    );
  }

  async read(manager: EntityManager, saleId: string): Promise<StockSegment[]> {
    const rows = (await manager.query(
      'SELECT segment_no, available, version FROM sale_stock_segments WHERE sale_id = ? ORDER BY segment_no',
      [saleId],
    )) as Record<string, number>[];
    return rows.map((row) => ({
      segmentNo: Number(row['segment_no']),
      available: Number(row['available']),
      version: Number(row['version']),
    }));
  }

  /** Takes `units` from a segment still at `version`; false: another buyer changed it first. */
  async take(manager: EntityManager, saleId: string, segment: StockSegment, units: number): Promise<boolean> {
    const result = (await manager.query(
      `UPDATE sale_stock_segments SET available = available - ?, version = version + 1
        WHERE sale_id = ? AND segment_no = ? AND version = ?`,
      [units, saleId, segment.segmentNo, segment.version],
    )) as { affectedRows: number };
    return result.affectedRows === 1;
  }

  /** Units in the sale's segments (0 for a sale that has none), in the caller's transaction or not. */
  async available(manager: EntityManager, saleId: string): Promise<number> {
    const [row] = (await manager.query(
      'SELECT COALESCE(SUM(available), 0) AS units FROM sale_stock_segments WHERE sale_id = ?',
      [saleId],
    )) as { units: string | number }[];
    return Number(row?.units ?? 0);
  }
}
