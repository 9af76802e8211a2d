import type { MovementMark } from '@flash-sale/db';

/** What a refill saw of the units moving between MySQL and Redis around its look at a sale's stock. */
export interface MovementLook {
  /** Read before the look began (before the refill's first lease). */
  before: MovementMark;
  /** Read once the look ended. */
  after: MovementMark;
  /** The return keys of every give-back the sale's buckets recorded, read once the look ended. */
  recordedGiveBacks: readonly string[];
  /** The return keys of the give-backs MySQL applied, read once the look ended. */
  appliedGiveBacks: ReadonlySet<string>;
}

/**
 * Whether a unit may have been on its way between MySQL and the sale's buckets during a look that found
 * them all empty: then the sale is not proven sold out, and the buyer is asked to try again
 * (docs/failure-model.md "Sold out"). A unit is on its way while
 *
 *   - a lease was recorded and not yet granted when the look began: its grant may land in a bucket the
 *     look had already read as empty (a lease recorded during the look adds a ledger row);
 *   - a ledger row was added during the look (a lease, an applied give-back): MySQL writes them under the
 *     sale row's lock, so the newest id only grows, in commit order;
 *   - a bucket recorded a give-back MySQL has not applied: its units are in no bucket and not yet in
 *     MySQL. Compared key by key: a Redis restarted without its data forgets the give-backs MySQL keeps.
 */
export function unitsWereMoving(look: MovementLook): boolean {
  const { before, after } = look;
  return (
    before.pendingLeases > 0 ||
    after.lastRowId !== before.lastRowId ||
    look.recordedGiveBacks.some((returnKey) => !look.appliedGiveBacks.has(returnKey))
  );
}
