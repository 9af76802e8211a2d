import { randomUUID } from 'node:crypto';
import type { MovementMark, SaleLeaseRow, StockLeaseRepository } from '@flash-sale/db';
import { bucketsOf, type HandoffStream, type ReservationScripts, type SaleState } from '@flash-sale/redis';
import { layoutOf } from './sale-lease-row';
import { unitsWereMoving } from './units-moving';

/**
 * Units moving between the buckets of a sale through MySQL: a bucket whose buyer found it empty while
 * MySQL had nothing left asks the others to give back part of their balance (give-back-4.lua), and MySQL
 * takes them back into `available`, from where a lease hands them on.
 */
export class BucketGiveBacks {
  constructor(
    private readonly repository: StockLeaseRepository,
    private readonly scripts: ReservationScripts,
    private readonly saleRedis: SaleState,
    private readonly handoff?: HandoffStream,
  ) {}

  /**
   * Asks every other bucket, in turn from `home`, for units until `wanted` came back: at least `wanted`
   * from a bucket that has them, else half of its balance. Returns the units MySQL took back, and whether
   * MySQL refused a give-back: more units than it can account to that bucket, which only a Redis restored
   * from an older copy of its data can give (then no other bucket is asked; the caller restarts the
   * incarnation).
   */
  async gather(
    saleId: string,
    sale: SaleLeaseRow,
    home: number,
    wanted: number,
  ): Promise<{ gathered: number; stale: boolean }> {
    const layout = layoutOf(saleId, sale);
    const balances = await this.saleRedis.balances(layout);
    let gathered = 0;
    for (let step = 1; step < sale.buckets && gathered < wanted; step++) {
      const index = (home + step) % sale.buckets;
      const balance = balances[index] ?? 0;
      if (balance <= 0) continue;
      const returnKey = `${saleId}:${index}:${randomUUID()}`;
      const donor = bucketsOf(layout)[index]!;
      const result = await this.scripts.giveBack(
        donor,
        sale.redisEpoch,
        returnKey,
        Math.max(Math.min(wanted, balance), Math.ceil(balance / 2)),
      );
      if (result.kind !== 'given-back' || result.units === 0) continue;
      // Applied here at once. The hand-off entry is there for a process that dies before this line: a
      // worker then applies it; here it is dropped, so nothing waits on the donor's stream. A refused one
      // is answered in MySQL too, so its entry goes as well.
      const outcome = await this.repository.applyGiveBack(saleId, {
        returnKey,
        bucket: index,
        units: result.units,
        epoch: sale.redisEpoch,
      });
      if (result.entryId) await this.handoff?.dropEntry(donor, result.entryId);
      if (outcome === 'refused') return { gathered, stale: true };
      gathered += result.units;
    }
    return { gathered, stale: false };
  }

  /**
   * Whether a unit was on its way between MySQL and the sale's buckets since `before` was read, or is
   * still (units-moving.ts): a sale whose buyer found nothing meanwhile is not proven sold out.
   */
  async unitsMovedSince(saleId: string, sale: SaleLeaseRow, before: MovementMark): Promise<boolean> {
    // A sale with one bucket never gives back: only its leases can be on their way.
    const withGiveBacks = sale.buckets > 1;
    const [recordedGiveBacks, after, appliedGiveBacks] = await Promise.all([
      withGiveBacks ? this.saleRedis.giveBackKeys(layoutOf(saleId, sale)) : [],
      this.repository.movementMark(saleId),
      withGiveBacks ? this.repository.appliedReturnKeys(saleId) : new Set<string>(),
    ]);
    return unitsWereMoving({ before, after, recordedGiveBacks, appliedGiveBacks });
  }
}
