import type { DataSource, QueryRunner } from 'typeorm';
import type { SaleDefinition, SaleEdit } from '@flash-sale/domain';

/**
 * What Redis copies of a sale's definition and judges every purchase by, as MySQL holds it, with its
 * version; `buckets`: the Redis buckets that each hold a copy of it.
 */
export type MySqlSaleWindow = Pick<SaleDefinition, 'startsAt' | 'endsAt' | 'perUserLimit' | 'buckets'> & {
  /** `sales.window_version`: bumped by every change of the three above. */
  version: number;
};

/** The sale's window as read while holding its lock, and the one write the holder may make. */
export interface LockedSaleWindow {
  read(): Promise<MySqlSaleWindow | undefined>;
  /** Writes the changes and the window's new version in one statement (with the sale's other edits). */
  write(changes: SaleEdit, version: number): Promise<void>;
}

/** The lock could not be had in time: another edit or repair of the window holds it. */
export class SaleWindowBusyError extends Error {}

/** How long an edit waits for another one of the same sale's window. */
const LOCK_WAIT_SECONDS = 5;

/**
 * The sale's window in MySQL, and the lock every change of it and every repair of Redis's copy takes
 * (docs/failure-model.md "A sale's window"). A named lock (GET_LOCK), not the sale's row: the row is the
 * stock's, which leases, writers and the fallback update many times a second, and the lock is held
 * across a Redis round trip.
 */
export class SaleWindowRepository {
  constructor(private readonly dataSource: DataSource) {}

  async read(saleId: string): Promise<MySqlSaleWindow | undefined> {
    return readWindow(this.dataSource.manager.query.bind(this.dataSource.manager), saleId);
  }

  /**
   * Runs `work` holding the sale's window lock, on one connection of its own; throws SaleWindowBusyError
   * when another holder keeps it past LOCK_WAIT_SECONDS.
   */
  async locked<T>(saleId: string, work: (window: LockedSaleWindow) => Promise<T>): Promise<T> {
    const runner: QueryRunner = this.dataSource.createQueryRunner();
    await runner.connect();
    const name = `sale-window:${saleId}`;
    try {
      const [row] = (await runner.query('SELECT GET_LOCK(?, ?) AS got', [name, LOCK_WAIT_SECONDS])) as {
        got: number | null;
      }[];
      if (Number(row?.got) !== 1) throw new SaleWindowBusyError(`sale ${saleId}: its window is being changed`);
      try {
        return await work({
          read: () => readWindow(runner.query.bind(runner), saleId),
          write: async (changes, version) => {
            const columns = Object.entries(COLUMNS).filter(([field]) => field in changes);
            await runner.query(
              `UPDATE sales SET ${[...columns.map(([, column]) => `${column} = ?`), 'window_version = ?'].join(', ')}
                WHERE id = ?`,
              [...columns.map(([field]) => changes[field as keyof SaleEdit] ?? null), version, saleId],
            );
          },
        });
      } finally {
        await runner.query('SELECT RELEASE_LOCK(?)', [name]).catch(() => undefined);
      }
    } finally {
      await runner.release();
    }
  }
}

/** The columns of SaleEdit. */
const COLUMNS: Record<keyof Required<SaleEdit>, string> = {
  name: 'name',
  description: 'description',
  imageUrl: 'image_url',
  endsAt: 'ends_at',
};

async function readWindow(
  query: (sql: string, parameters: unknown[]) => Promise<unknown>,
  saleId: string,
): Promise<MySqlSaleWindow | undefined> {
  const [row] = (await query(
    'SELECT starts_at, ends_at, per_user_limit, window_version, buckets FROM sales WHERE id = ?',
    [saleId],
  )) as Record<string, unknown>[];
  if (!row) return undefined;
  return {
    startsAt: new Date(row['starts_at'] as Date),
    endsAt: new Date(row['ends_at'] as Date),
    perUserLimit: Number(row['per_user_limit']),
    version: Number(row['window_version']),
    buckets: Number(row['buckets'] ?? 1),
  };
}
