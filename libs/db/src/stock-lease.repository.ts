import {
  HOLDING_STATUSES,
  type LoadedOrder,
  type OrderStatus,
  leaseMove,
  leaseUnits,
  REDIS_BACKED_STRATEGIES,
  type SaleDefinition,
  type SaleStockCounts,
  type SaleStrategy,
  settleInDoubt,
} from '@flash-sale/domain';
import type { DataSource } from 'typeorm';
import { applyGiveBack, type GiveBackOutcome, type GivenBackUnits } from './give-backs';
import { SALE_STOCK_COLUMNS, saleStockCountsOf } from './sale-stock.repository';

/** A sale's row as the lease bookkeeping needs it: its stock counts and what a load copies into Redis. */
export type SaleLeaseRow = SaleStockCounts &
  Pick<SaleDefinition, 'stock' | 'startsAt' | 'endsAt' | 'perUserLimit' | 'strategy' | 'buckets'> & {
    /** Bumped by every edit of the window or limit (SaleWindowRepository); a load copies it with them. */
    windowVersion: number;
  };

export interface Lease {
  leaseId: string;
  epoch: number;
  units: number;
  /** The bucket it is granted to. */
  bucket: number;
}

/** The lease ledger of one sale, for the audit and /metrics. */
export interface LeaseLedger {
  /** Units ever leased to Redis (every incarnation). */
  granted: number;
  /** Units of in-doubt leases given back to `available` by settlements. */
  returned: number;
  /** Units leased and not yet an order (`sales.leased`). */
  outstanding: number;
  /** The part of `outstanding` that belongs to lost incarnations. */
  inDoubt: number;
  /** Leased units handed to orders: granted − returned − outstanding. */
  converted: number;
  /** Units of leases MySQL made that Redis has not confirmed yet (a grant in flight, or one to retry). */
  pending: number;
}

/** What StockLeaseRepository.movementMark reads of the units moving between MySQL and Redis. */
export interface MovementMark {
  /** The newest ledger row: every lease and every applied give-back adds one. */
  lastRowId: number;
  /** Leases recorded whose Redis grant is not confirmed yet: units on their way to a bucket. */
  pendingLeases: number;
}

type LeaseState = 'PENDING' | 'GRANTED' | 'IN_DOUBT' | 'SETTLED' | 'RETURNED';

/**
 * MySQL's side of stock leases (docs/architecture.md "Who owns the stock"): `available + leased + held == stock`
 * in the sale's row, and the `stock_leases` ledger. Every change here is one short transaction with
 * relative, guarded updates, so it never races the worker's optimistic writes into a wrong count:
 * a concurrent writer's version check simply fails and retries.
 */
export class StockLeaseRepository {
  constructor(private readonly dataSource: DataSource) {}

  async saleRow(saleId: string): Promise<SaleLeaseRow | undefined> {
    const [row] = (await this.dataSource.query(
      `SELECT stock, ${SALE_STOCK_COLUMNS}, starts_at, ends_at, per_user_limit, window_version, strategy, buckets
         FROM sales WHERE id = ?`,
      [saleId],
    )) as Record<string, unknown>[];
    if (!row) return undefined;
    return {
      ...saleStockCountsOf(row),
      stock: Number(row['stock']),
      startsAt: new Date(row['starts_at'] as Date),
      endsAt: new Date(row['ends_at'] as Date),
      perUserLimit: Number(row['per_user_limit']),
      windowVersion: Number(row['window_version'] ?? 0),
      strategy: row['strategy'] as SaleStrategy,
      buckets: Number(row['buckets'] ?? 1),
    };
  }

  /**
   * Moves up to `maxUnits` from `available` to `leased` for incarnation `epoch` and one of its buckets, with
   * the lease's ledger row, in one transaction. Returns undefined when nothing is available or the sale
   * moved to another incarnation meanwhile (the caller reads the row again). A bucket of a sale with
   * several takes at most its share of what is left (`spread`), so the last units are spread over them.
   */
  async lease(saleId: string, epoch: number, maxUnits: number, bucket = 0, spread = true): Promise<Lease | undefined> {
    return this.dataSource.transaction('READ COMMITTED', async (manager) => {
      const [row] = (await manager.query(
        'SELECT available, buckets FROM sales WHERE id = ? AND redis_epoch = ? FOR UPDATE',
        [saleId, epoch],
      )) as { available: number; buckets: number }[];
      const units = leaseUnits(Number(row?.available ?? 0), Number(row?.buckets ?? 1), maxUnits, spread);
      if (units <= 0) return undefined;
      const move = leaseMove(units);
      await manager.query(
        `UPDATE sales SET available = available + ?, leased = leased + ?, version = version + 1 WHERE id = ?`,
        [move.available, move.leased, saleId],
      );
      const inserted = (await manager.query(
        `INSERT INTO stock_leases (sale_id, epoch, bucket, units, state) VALUES (?, ?, ?, ?, 'PENDING')`,
        [saleId, epoch, bucket, units],
      )) as { insertId: number | string };
      return { leaseId: String(inserted.insertId), epoch, units, bucket };
    });
  }

  /** Redis confirmed the grant. Only a PENDING lease moves: one put in doubt meanwhile stays in doubt. */
  async markGranted(leaseId: string): Promise<void> {
    await this.dataSource.query(`UPDATE stock_leases SET state = 'GRANTED' WHERE id = ? AND state = 'PENDING'`, [
      leaseId,
    ]);
  }

  /** Leases of `epoch` in one state (reconciliation retries PENDING grants and checks GRANTED ones). */
  async leasesOf(saleId: string, epoch: number, state: LeaseState): Promise<Lease[]> {
    const rows = (await this.dataSource.query(
      'SELECT id, units, bucket FROM stock_leases WHERE sale_id = ? AND epoch = ? AND state = ?',
      [saleId, epoch, state],
    )) as { id: string | number; units: number; bucket: number }[];
    return rows.map((row) => ({
      leaseId: String(row.id),
      epoch,
      units: Number(row.units),
      bucket: Number(row.bucket),
    }));
  }

  /**
   * Starts a new incarnation because Redis lost the state of incarnation `lostEpoch` (or never had
   * one: `lostEpoch` 0). Everything leased so far is in doubt: never sold again, returned by
   * `settle` once its surviving hand-offs are written. Conditional on the epoch the caller saw, so of
   * several instances noticing the same loss one opens the next incarnation. Returns the epoch the
   * sale is on afterwards.
   */
  async openEpoch(saleId: string, lostEpoch: number): Promise<number> {
    return this.dataSource.transaction('READ COMMITTED', async (manager) => {
      const result = (await manager.query(
        // openNextIncarnation (libs/domain stock-moves.ts), conditional on the epoch seen.
        `UPDATE sales SET redis_epoch = redis_epoch + 1, in_doubt = leased, version = version + 1
          WHERE id = ? AND redis_epoch = ?`,
        [saleId, lostEpoch],
      )) as { affectedRows: number };
      if (result.affectedRows === 1) {
        await manager.query(
          `UPDATE stock_leases SET state = 'IN_DOUBT' WHERE sale_id = ? AND epoch <= ? AND state IN ('PENDING', 'GRANTED')`,
          [saleId, lostEpoch],
        );
      }
      const [row] = (await manager.query('SELECT redis_epoch FROM sales WHERE id = ?', [saleId])) as {
        redis_epoch: number;
      }[];
      return Number(row?.redis_epoch ?? 0);
    });
  }

  /**
   * Gives the in-doubt units back to `available` — the caller has checked that every surviving
   * hand-off of the lost incarnations is written — and marks those incarnations settled, so a
   * straggling order of theirs takes its units from `available` instead. Returns the units returned.
   */
  async settle(saleId: string): Promise<number> {
    return this.dataSource.transaction('READ COMMITTED', async (manager) => {
      const [row] = (await manager.query(`SELECT ${SALE_STOCK_COLUMNS} FROM sales WHERE id = ? FOR UPDATE`, [
        saleId,
      ])) as Record<string, unknown>[];
      if (!row) return 0;
      const counts = saleStockCountsOf(row);
      const { sale: settled, move } = settleInDoubt(counts);
      const units = move.available;
      const { settledEpoch } = settled;
      if (units === 0 && counts.settledEpoch >= settledEpoch) return 0;
      await manager.query(
        `UPDATE sales SET available = available + ?, leased = leased + ?, in_doubt = in_doubt + ?, settled_epoch = ?,
                version = version + 1
          WHERE id = ?`,
        [move.available, move.leased, move.inDoubt, settledEpoch, saleId],
      );
      await manager.query(`UPDATE stock_leases SET state = 'SETTLED' WHERE sale_id = ? AND state = 'IN_DOUBT'`, [
        saleId,
      ]);
      if (units > 0) {
        await manager.query(`INSERT INTO stock_leases (sale_id, epoch, units, state) VALUES (?, ?, ?, 'RETURNED')`, [
          saleId,
          settledEpoch,
          units,
        ]);
      }
      return units;
    });
  }

  /** How long ago (ms, by MySQL's clock) the newest in-doubt lease was put in doubt; undefined when none is. */
  async inDoubtForMs(saleId: string): Promise<number | undefined> {
    const [row] = (await this.dataSource.query(
      `SELECT TIMESTAMPDIFF(MICROSECOND, MAX(updated_at), CURRENT_TIMESTAMP(3)) DIV 1000 AS ms
         FROM stock_leases WHERE sale_id = ? AND state = 'IN_DOUBT'`,
      [saleId],
    )) as { ms: string | number | null }[];
    return row?.ms === null || row?.ms === undefined ? undefined : Number(row.ms);
  }

  /** Units of the orders (any status) written from incarnation `epoch`'s leases, by bucket. */
  async unitsWrittenFrom(saleId: string, epoch: number): Promise<Map<number, number>> {
    const rows = (await this.dataSource.query(
      'SELECT bucket, SUM(quantity) AS units FROM orders WHERE sale_id = ? AND lease_epoch = ? GROUP BY bucket',
      [saleId, epoch],
    )) as { bucket: number; units: string | number }[];
    return new Map(rows.map((row) => [Number(row.bucket), Number(row.units)]));
  }

  /** See applyGiveBack in give-backs.ts: MySQL takes back only units it can account to the bucket. */
  applyGiveBack(saleId: string, giveBack: GivenBackUnits): Promise<GiveBackOutcome> {
    return applyGiveBack(this.dataSource, saleId, giveBack);
  }

  /**
   * The return keys of the give-backs MySQL has answered from incarnation `epoch` (applied or refused),
   * by bucket: a bucket that kept its data recorded every one of them (SaleIncarnations.check).
   */
  async giveBacksOf(saleId: string, epoch: number): Promise<Map<number, string[]>> {
    const rows = (await this.dataSource.query(
      `SELECT bucket, return_key FROM stock_leases
        WHERE sale_id = ? AND state = 'RETURNED' AND epoch = ? AND return_key IS NOT NULL`,
      [saleId, epoch],
    )) as { bucket: number; return_key: string }[];
    const byBucket = new Map<number, string[]>();
    for (const row of rows) {
      const bucket = Number(row.bucket);
      byBucket.set(bucket, [...(byBucket.get(bucket) ?? []), row.return_key]);
    }
    return byBucket;
  }

  /**
   * Where the sale's units stand between MySQL and Redis: the newest ledger row and the leases waiting for
   * their grant. Read before and after a look at every bucket, it tells whether a unit was on its way
   * during that look (libs/stock units-moving.ts).
   */
  async movementMark(saleId: string): Promise<MovementMark> {
    const [row] = (await this.dataSource.query(
      `SELECT COALESCE(MAX(id), 0) AS last_id, COALESCE(SUM(state = 'PENDING'), 0) AS pending
         FROM stock_leases WHERE sale_id = ?`,
      [saleId],
    )) as { last_id: string | number; pending: string | number }[];
    return { lastRowId: Number(row?.last_id ?? 0), pendingLeases: Number(row?.pending ?? 0) };
  }

  /** The return keys of the give-backs MySQL has answered for the sale (applied, or refused: see give-backs.ts). */
  async appliedReturnKeys(saleId: string): Promise<Set<string>> {
    const rows = (await this.dataSource.query(
      'SELECT return_key FROM stock_leases WHERE sale_id = ? AND return_key IS NOT NULL',
      [saleId],
    )) as { return_key: string }[];
    return new Set(rows.map((row) => row.return_key));
  }

  /**
   * The sale's orders, as a Redis load needs them (LoadedOrder): every one when a new incarnation is
   * loaded, or only those MySQL sold itself (which Redis never saw) for a refresh. Ended ones too: their
   * tokens are spent.
   */
  async ordersToLoad(saleId: string, onlySoldByMySql: boolean): Promise<LoadedOrder[]> {
    const rows = (await this.dataSource.query(
      `SELECT order_no, user_id, quantity, user_slot, reserved_at, submit_token, status FROM orders
        WHERE sale_id = ?${onlySoldByMySql ? ' AND lease_epoch IS NULL' : ''}`,
      [saleId],
    )) as {
      order_no: string;
      user_id: string;
      quantity: number;
      user_slot: number | null;
      reserved_at: Date;
      submit_token: string | null;
      status: OrderStatus;
    }[];
    return rows.map((row) => ({
      orderNo: row.order_no,
      userId: row.user_id,
      quantity: Number(row.quantity),
      slot: Number(row.user_slot ?? 1),
      reservedAt: new Date(row.reserved_at),
      submitToken: row.submit_token,
      holding: HOLDING_STATUSES.includes(row.status),
    }));
  }

  /**
   * Redis-backed sales whose books need work whatever happens in Redis: units in doubt (to settle), or
   * a lease whose Redis grant is not confirmed (PENDING: to grant again). Only sales that ended after
   * `endedAfter`. One query; both halves read only matching rows (ix_sales_in_doubt,
   * ix_stock_leases_state), so it costs the same however many sales there are.
   */
  async salesNeedingRepair(endedAfter: Date): Promise<string[]> {
    const rows = (await this.dataSource.query(
      `SELECT id FROM sales WHERE in_doubt > 0 AND strategy IN (?) AND ends_at > ?
       UNION
       SELECT l.sale_id FROM stock_leases l JOIN sales s ON s.id = l.sale_id
        WHERE l.state = 'PENDING' AND s.ends_at > ?`,
      [REDIS_BACKED_STRATEGIES, endedAfter, endedAfter],
    )) as { id: string | number }[];
    return rows.map((row) => String(row.id));
  }

  /** Every Redis-backed sale that ended after `endedAfter` (or has not ended), with its end. */
  async redisBackedSales(endedAfter: Date): Promise<{ saleId: string; endsAt: Date }[]> {
    const rows = (await this.dataSource.query(
      `SELECT id, ends_at FROM sales WHERE strategy IN (?) AND ends_at > ? ORDER BY id`,
      [REDIS_BACKED_STRATEGIES, endedAfter],
    )) as { id: string | number; ends_at: Date }[];
    return rows.map((row) => ({ saleId: String(row.id), endsAt: new Date(row.ends_at) }));
  }

  /** The ledgers of every Redis-backed sale that ended after `since` (for /metrics), by sale id. */
  async recentLedgers(since: Date): Promise<Map<string, LeaseLedger>> {
    const rows = (await this.dataSource.query(
      `SELECT s.id, s.leased, s.in_doubt,
              COALESCE(SUM(CASE WHEN l.state <> 'RETURNED' THEN l.units END), 0) AS granted,
              COALESCE(SUM(CASE WHEN l.state = 'RETURNED' THEN l.units END), 0) AS returned,
              COALESCE(SUM(CASE WHEN l.state = 'PENDING' THEN l.units END), 0) AS pending
         FROM sales s LEFT JOIN stock_leases l ON l.sale_id = s.id
        WHERE s.strategy IN (?) AND s.ends_at > ?
        GROUP BY s.id, s.leased, s.in_doubt`,
      [REDIS_BACKED_STRATEGIES, since],
    )) as Record<string, string | number>[];
    return new Map(rows.map((row) => [String(row['id']), ledgerOf(row)]));
  }

  async ledger(saleId: string): Promise<LeaseLedger> {
    const [[sums], [sale]] = (await Promise.all([
      this.dataSource.query(
        `SELECT COALESCE(SUM(CASE WHEN state <> 'RETURNED' THEN units END), 0) AS granted,
                COALESCE(SUM(CASE WHEN state = 'RETURNED' THEN units END), 0) AS returned,
                COALESCE(SUM(CASE WHEN state = 'PENDING' THEN units END), 0) AS pending
           FROM stock_leases WHERE sale_id = ?`,
        [saleId],
      ),
      this.dataSource.query('SELECT leased, in_doubt FROM sales WHERE id = ?', [saleId]),
    ])) as [Record<string, string | number>[], Record<string, string | number>[]];
    return ledgerOf({ ...sums, ...sale });
  }
}

/** A ledger from one row of lease sums (`granted`, `returned`, `pending`) and the sale's `leased`, `in_doubt`. */
function ledgerOf(row: Record<string, string | number | undefined>): LeaseLedger {
  const granted = Number(row['granted'] ?? 0);
  const returned = Number(row['returned'] ?? 0);
  const outstanding = Number(row['leased'] ?? 0);
  return {
    granted,
    returned,
    outstanding,
    inDoubt: Number(row['in_doubt'] ?? 0),
    converted: granted - returned - outstanding,
    pending: Number(row['pending'] ?? 0),
  };
}
