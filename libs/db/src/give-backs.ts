import type { DataSource, EntityManager } from 'typeorm';
import { isDuplicateKeyError } from './mysql-errors';

/** Units a bucket took out of its balance to give back to MySQL (give-back-4.lua). */
export interface GivenBackUnits {
  returnKey: string;
  bucket: number;
  units: number;
  /** The incarnation whose leased units they were. */
  epoch: number;
}

/**
 * What MySQL did with a give-back: took its units back (`applied`, also when its incarnation is settled
 * and nothing moves), had done so before (`already-applied`), or refused units it cannot account to the
 * bucket (`refused`: the Redis that gave them holds an older copy of its data than MySQL has seen).
 */
export type GiveBackOutcome = 'applied' | 'already-applied' | 'refused';

/**
 * Units a bucket gave back go to `available`, once per return key (a `RETURNED` ledger row keyed by it).
 * Units of an incarnation that lost its state are in doubt: they leave `in_doubt` too, unless a
 * settlement already returned them (their incarnation is settled), when nothing moves.
 *
 * MySQL owns every unit, so it takes back no more than it can account to that bucket in that incarnation
 * (unitsAccountableTo). A give-back of more comes from a Redis restored from an older copy, whose balance
 * still counts units MySQL has written as orders: it is `refused` and recorded under its key with 0 units
 * (answered once, like an applied one); the caller restarts the incarnation (docs/failure-model.md,
 * "Give-backs from an older copy").
 */
export function applyGiveBack(
  dataSource: DataSource,
  saleId: string,
  giveBack: GivenBackUnits,
): Promise<GiveBackOutcome> {
  return dataSource.transaction('READ COMMITTED', async (manager) => {
    const [row] = (await manager.query('SELECT redis_epoch, settled_epoch FROM sales WHERE id = ? FOR UPDATE', [
      saleId,
    ])) as { redis_epoch: number; settled_epoch: number }[];
    if (!row) return 'refused';
    // Before the account: an applied give-back is counted in it, and its replay (a worker applying an
    // entry the API applied already) must not be measured against itself.
    const [seen] = (await manager.query('SELECT id FROM stock_leases WHERE return_key = ?', [
      giveBack.returnKey,
    ])) as unknown[];
    if (seen) return 'already-applied';
    const settled = giveBack.epoch <= Number(row.settled_epoch);
    const refused =
      !settled && giveBack.units > (await unitsAccountableTo(manager, saleId, giveBack.epoch, giveBack.bucket));
    const units = settled || refused ? 0 : giveBack.units;
    try {
      await manager.query(
        `INSERT INTO stock_leases (sale_id, epoch, bucket, units, state, return_key) VALUES (?, ?, ?, ?, 'RETURNED', ?)`,
        [saleId, giveBack.epoch, giveBack.bucket, units, giveBack.returnKey],
      );
    } catch (error) {
      if (isDuplicateKeyError(error)) return 'already-applied';
      throw error;
    }
    if (refused) return 'refused';
    if (units === 0) return 'applied';
    const inDoubt = giveBack.epoch < Number(row.redis_epoch) ? units : 0;
    await manager.query(
      `UPDATE sales SET available = available + ?, leased = leased - ?, in_doubt = in_doubt - ?, version = version + 1
        WHERE id = ?`,
      [units, units, inDoubt, saleId],
    );
    return 'applied';
  });
}

/**
 * Units MySQL can account to one bucket of a sale in one incarnation: the leases it granted that bucket
 * (every state: one still PENDING may already sit in the bucket's balance), less the units of the orders
 * written from that bucket in that incarnation (any status: each took its units out of the balance when
 * it was reserved), less what the bucket already gave back (`RETURNED` rows with a return key; a
 * settlement's row has none). A bucket that kept its data holds at most this much. Read under the sale's
 * row lock, so no order or give-back of the sale commits meanwhile.
 */
async function unitsAccountableTo(
  manager: EntityManager,
  saleId: string,
  epoch: number,
  bucket: number,
): Promise<number> {
  // One after the other: both run on the transaction's one connection.
  const [ledger] = (await manager.query(
    `SELECT COALESCE(SUM(CASE WHEN state <> 'RETURNED' THEN units END), 0) AS leased,
            COALESCE(SUM(CASE WHEN state = 'RETURNED' THEN units END), 0) AS given_back
       FROM stock_leases
      WHERE sale_id = ? AND epoch = ? AND bucket = ? AND (state <> 'RETURNED' OR return_key IS NOT NULL)`,
    [saleId, epoch, bucket],
  )) as Record<string, string | number>[];
  const [orders] = (await manager.query(
    'SELECT COALESCE(SUM(quantity), 0) AS units FROM orders WHERE sale_id = ? AND lease_epoch = ? AND bucket = ?',
    [saleId, epoch, bucket],
  )) as Record<string, string | number>[];
  return Number(ledger?.['leased'] ?? 0) - Number(ledger?.['given_back'] ?? 0) - Number(orders?.['units'] ?? 0);
}
