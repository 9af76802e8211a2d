import type { EntityManager } from 'typeorm';

export interface SaleStockRow {
  priceCents: number;
  available: number;
  version: number;
  paymentTimeoutSeconds: number;
}

/**
 * MySQL stock of a sale, behind the optimistic lock. Every order's units come off this one hot row,
 * so callers take units for many orders at once (group commit) and update it last in their
 * transaction, holding its row lock for as short a time as possible.
 */
export class SaleStockRepository {
  /** A plain read: no lock. The version makes the later update safe. */
  async read(manager: EntityManager, saleId: string): Promise<SaleStockRow | undefined> {
    const [row] = (await manager.query(
      'SELECT price_cents, available, version, payment_timeout_seconds FROM sales WHERE id = ?',
      [saleId],
    )) as { price_cents: number; available: number; version: number; payment_timeout_seconds: number }[];
    return row
      ? {
          priceCents: Number(row.price_cents),
          available: Number(row.available),
          version: Number(row.version),
          paymentTimeoutSeconds: Number(row.payment_timeout_seconds),
        }
      : undefined;
  }

  /**
   * Takes `units` if the row is still at `expectedVersion` and has them. False means someone else
   * changed the row since `read` (an optimistic-lock conflict): the caller rolls back and retries.
   */
  async takeUnits(manager: EntityManager, saleId: string, expectedVersion: number, units: number): Promise<boolean> {
    const result = (await manager.query(
      `UPDATE sales SET available = available - ?, version = version + 1
        WHERE id = ? AND version = ? AND available >= ?`,
      [units, saleId, expectedVersion, units],
    )) as { affectedRows: number };
    return result.affectedRows === 1;
  }

  /** Gives `units` back (a cancelled or expired order), under the same optimistic lock. */
  async returnUnits(manager: EntityManager, saleId: string, expectedVersion: number, units: number): Promise<boolean> {
    const result = (await manager.query(
      `UPDATE sales SET available = available + ?, version = version + 1
        WHERE id = ? AND version = ? AND available + ? <= stock`,
      [units, saleId, expectedVersion, units],
    )) as { affectedRows: number };
    return result.affectedRows === 1;
  }
}
