import { type MySqlSaleWindow, SaleWindowBusyError, type SaleWindowRepository } from '@flash-sale/db';
import { DomainError, ErrorCode, type SaleEdit, type SaleLayout } from '@flash-sale/domain';
import {
  bucketsOf,
  type RedisSaleWindow,
  type ReservationScripts,
  type SaleActivity,
  type SaleState,
  type WindowWrite,
} from '@flash-sale/redis';
import { markSaleChanged } from './sale-marks';

/**
 * A sale's window (start, end, per-user limit) lives in MySQL, and Redis judges every purchase by its
 * copy (docs/failure-model.md "A sale's window"). The promise: Redis never sells outside the window
 * MySQL holds at that moment. So every change and every repair holds the sale's window lock in MySQL, and
 * an edit narrows Redis to what both the old and the new window allow *before* MySQL changes, then gives
 * Redis the new window whole. Whatever fails on the way, Redis's copy is never wider than MySQL's; a
 * copy left narrower (an edit refused half way) is put back by `align`, which reconciliation runs.
 */
export class SaleWindows {
  constructor(
    private readonly repository: SaleWindowRepository,
    private readonly scripts: ReservationScripts,
    private readonly saleRedis: SaleState,
    private readonly activity?: SaleActivity,
  ) {}

  /**
   * Applies an admin's edit of a Redis-backed sale to MySQL and Redis, or throws with MySQL unchanged —
   * except when Redis fails after MySQL took the edit: then Redis holds a narrower window (it never
   * sells outside either) until `align`, and the caller's error says "try again", which completes it.
   */
  async change(saleId: string, changes: SaleEdit): Promise<void> {
    try {
      await this.repository.locked(saleId, async (locked) => {
        const before = await locked.read();
        if (!before) throw new DomainError(ErrorCode.SaleNotFound, `No sale with id ${saleId}`);
        const after: MySqlSaleWindow = {
          ...before,
          endsAt: changes.endsAt ?? before.endsAt,
          version: before.version + 1,
        };
        // Refused by Redis here, the edit is refused whole: MySQL has not changed.
        const layout = layoutOf(saleId, before);
        await this.write(layout, narrowest(before, after), false);
        await locked.write(changes, after.version);
        await this.write(layout, after, true);
      });
    } catch (error) {
      if (error instanceof SaleWindowBusyError) throw new DomainError(ErrorCode.Unavailable, error.message);
      throw error;
    } finally {
      // Reconciliation visits the sale soon, and aligns a copy an error left narrower.
      await markSaleChanged(this.activity, saleId);
    }
  }

  /**
   * Makes every bucket's copy equal MySQL's window, if one differs; returns whether it had to. `known`:
   * the window just read from MySQL (saves the read when Redis agrees). A bucket without state is left
   * alone: loading it writes the window. While an edit holds the lock there is nothing to do: the edit
   * ends with Redis and MySQL in line, or with a copy narrower than both.
   */
  async align(saleId: string, known?: MySqlSaleWindow): Promise<boolean> {
    const mysql = known ?? (await this.repository.read(saleId));
    if (!mysql || !(await this.differs(saleId, mysql))) return false;
    try {
      return await this.repository.locked(saleId, async (locked) => {
        const window = await locked.read();
        if (!window || !(await this.differs(saleId, window))) return false;
        await this.write(layoutOf(saleId, window), window, true);
        return true;
      });
    } catch (error) {
      if (error instanceof SaleWindowBusyError) return false;
      throw error;
    }
  }

  private async differs(saleId: string, mysql: MySqlSaleWindow): Promise<boolean> {
    const copies = await this.saleRedis.windows(layoutOf(saleId, mysql));
    return copies.some((copy) => copy !== undefined && !sameWindow(copy, mysql));
  }

  /** Writes `window` into every bucket of the sale. */
  private async write(sale: SaleLayout, window: WindowWrite, ifPresent: boolean): Promise<void> {
    for (const bucket of bucketsOf(sale)) await this.scripts.setWindow(bucket, window, ifPresent);
  }
}

function layoutOf(saleId: string, window: MySqlSaleWindow): SaleLayout {
  return { id: saleId, buckets: window.buckets };
}

/** What both windows allow: the later start, the earlier end, the smaller limit. */
function narrowest(a: MySqlSaleWindow, b: MySqlSaleWindow): WindowWrite {
  return {
    startsAt: a.startsAt > b.startsAt ? a.startsAt : b.startsAt,
    endsAt: a.endsAt < b.endsAt ? a.endsAt : b.endsAt,
    perUserLimit: Math.min(a.perUserLimit, b.perUserLimit),
    version: b.version,
  };
}

function sameWindow(copy: RedisSaleWindow, mysql: MySqlSaleWindow): boolean {
  return (
    copy.startsAtMs === mysql.startsAt.getTime() &&
    copy.endsAtMs === mysql.endsAt.getTime() &&
    copy.perUserLimit === mysql.perUserLimit &&
    copy.version === mysql.version
  );
}
