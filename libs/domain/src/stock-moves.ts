/**
 * The stock arithmetic of a sale's MySQL row (docs/architecture.md "Who owns the stock"): where an order's
 * units come from when it is written, and what goes back when it fails, is cancelled or expires. The row
 * keeps `available + leased + held == stock`, with `in_doubt` the part of `leased` granted to Redis
 * incarnations that were lost; libs/db applies these moves under the row's optimistic lock.
 */

/** Where a sale's units are, and which Redis incarnation holds the leased ones. */
export interface SaleStockCounts {
  available: number;
  leased: number;
  inDoubt: number;
  /** The Redis incarnation the sale sells on. */
  redisEpoch: number;
  /** Incarnations up to this one are settled: their leases were given back to `available`. */
  settledEpoch: number;
}

/** A change of the sale's stock columns, each a delta. */
export interface StockMove {
  available: number;
  leased: number;
  inDoubt: number;
}

export const NO_MOVE: StockMove = Object.freeze({ available: 0, leased: 0, inDoubt: 0 });

/**
 * Where a written order's units are in the row: in `leased` for the current incarnation (`lease`), in its
 * `in_doubt` part for an earlier one not settled yet, and back in `available` for a settled incarnation.
 * An order MySQL sold itself (epoch 0) took its units from `available` when it was made.
 */
export type UnitSource = 'lease' | 'in-doubt' | 'available';

export function unitSource(orderEpoch: number, sale: SaleStockCounts): UnitSource {
  if (orderEpoch <= sale.settledEpoch) return 'available';
  return orderEpoch < sale.redisEpoch ? 'in-doubt' : 'lease';
}

/**
 * Units taken off one row for several orders at once (the worker writes orders in batches, and updates the
 * row once): what each source can still give, and the move taking them makes.
 */
export class StockTake {
  private readonly left: Record<UnitSource, number>;
  private readonly taken: StockMove = { available: 0, leased: 0, inDoubt: 0 };

  constructor(sale: SaleStockCounts) {
    this.left = { lease: sale.leased - sale.inDoubt, 'in-doubt': sale.inDoubt, available: sale.available };
  }

  /** Takes `units` from `source` if it has them; false leaves everything as it was. */
  take(source: UnitSource, units: number): boolean {
    if (this.left[source] < units) return false;
    this.left[source] -= units;
    if (source === 'available') this.taken.available -= units;
    else this.taken.leased -= units;
    if (source === 'in-doubt') this.taken.inDoubt -= units;
    return true;
  }

  get move(): StockMove {
    return { ...this.taken };
  }

  get changed(): boolean {
    return this.taken.available !== 0 || this.taken.leased !== 0 || this.taken.inDoubt !== 0;
  }
}

/**
 * An order written `FAILED` (MySQL refused it: its buyer's purchase slot was taken) gives its units back
 * to `available` from wherever its incarnation left them. Units its source no longer has (a sale in
 * trouble) cannot be given back: nothing moves. Units already in `available` stay there.
 */
export function failedOrderMove(sale: SaleStockCounts, orderEpoch: number, quantity: number): StockMove {
  const source = unitSource(orderEpoch, sale);
  if (source === 'available') return NO_MOVE;
  const take = new StockTake(sale);
  if (!take.take(source, quantity)) return NO_MOVE;
  const taken = take.move;
  return { ...taken, available: taken.available + quantity };
}

/**
 * A cancelled or expired order's units go back to `available`, but never more than the sale can hold:
 * `available + leased` stays within the stock. Only a sale that oversold (`naive-unsafe`, on purpose) has
 * orders whose units never existed; their surplus is dropped instead of blocking every later return.
 */
export function returnedUnitsMove(sale: SaleStockCounts & { stock: number }, quantity: number): StockMove {
  const room = Math.max(0, sale.stock - sale.available - sale.leased);
  return { available: Math.min(quantity, room), leased: 0, inDoubt: 0 };
}

/**
 * How many units one lease moves from `available` to `leased`: up to `maxUnits`, and for a bucket of a sale
 * with several (`spread`), at most its share of what is left, so the last units are spread over them.
 */
export function leaseUnits(available: number, buckets: number, maxUnits: number, spread: boolean): number {
  return Math.max(0, Math.min(maxUnits, spread ? Math.ceil(available / Math.max(1, buckets)) : available));
}

export function leaseMove(units: number): StockMove {
  return { available: -units, leased: units, inDoubt: 0 };
}

/**
 * Redis lost the incarnation the sale sells on (or holds a stale copy of it): the next one opens, and
 * everything leased so far is in doubt — never sold again, settled once its surviving hand-offs are written.
 */
export function openNextIncarnation<T extends SaleStockCounts>(sale: T): T {
  return { ...sale, redisEpoch: sale.redisEpoch + 1, inDoubt: sale.leased };
}

/**
 * The in-doubt units go back to `available` and the lost incarnations are settled: an order of theirs
 * written later takes its units from `available` (unitSource).
 */
export function settleInDoubt<T extends SaleStockCounts>(sale: T): { sale: T; move: StockMove } {
  const move = { available: sale.inDoubt, leased: -sale.inDoubt, inDoubt: -sale.inDoubt };
  return { sale: { ...applyStockMove(sale, move), settledEpoch: sale.redisEpoch - 1 }, move };
}

/** The counts after `move`. */
export function applyStockMove<T extends SaleStockCounts>(sale: T, move: StockMove): T {
  return {
    ...sale,
    available: sale.available + move.available,
    leased: sale.leased + move.leased,
    inDoubt: sale.inDoubt + move.inDoubt,
  };
}
