import fc from 'fast-check';
import {
  applyStockMove,
  failedOrderMove,
  leaseMove,
  leaseUnits,
  openNextIncarnation,
  returnedUnitsMove,
  type SaleStockCounts,
  settleInDoubt,
  StockTake,
  unitSource,
} from './stock-moves';

/** A reservation Redis made and the worker has not written yet: its incarnation and units. */
interface Unwritten {
  epoch: number;
  quantity: number;
}

/**
 * A sale's whole life in one model: MySQL's row moved only by the domain's functions, and a Redis that
 * sells what it was leased on the incarnation it holds. Every step a generator picks is something the
 * system really does, in any order, including the faults (Redis losing the sale, a hand-off lost with it,
 * settlement racing a straggler).
 */
class SaleLife {
  sale: SaleStockCounts & { stock: number };
  redis = { epoch: 1, balance: 0 };
  unwritten: Unwritten[] = [];
  held: number[] = [];
  /** Orders written FAILED although MySQL had their units where their incarnation left them. */
  wronglyFailed: string[] = [];

  constructor(stock: number) {
    this.sale = { stock, available: stock, leased: 0, inDoubt: 0, redisEpoch: 1, settledEpoch: 0 };
  }

  lease(maxUnits: number, buckets: number, spread: boolean): void {
    if (this.redis.epoch !== this.sale.redisEpoch) return; // a grant to another incarnation is refused
    const units = leaseUnits(this.sale.available, buckets, maxUnits, spread);
    this.sale = applyStockMove(this.sale, leaseMove(units));
    this.redis.balance += units;
  }

  reserve(quantity: number): void {
    if (this.redis.balance < quantity) return;
    this.redis.balance -= quantity;
    this.unwritten.push({ epoch: this.redis.epoch, quantity });
  }

  /** The worker writes the oldest `count` hand-offs in one transaction. */
  writeBatch(count: number): void {
    const batch = this.unwritten.splice(0, count);
    const take = new StockTake(this.sale);
    // What each place still has for the orders of this batch, counted independently of StockTake.
    const left = {
      live: this.sale.leased - this.sale.inDoubt,
      inDoubt: this.sale.inDoubt,
      available: this.sale.available,
    };
    for (const order of batch) {
      const place =
        order.epoch <= this.sale.settledEpoch ? 'available' : order.epoch < this.sale.redisEpoch ? 'inDoubt' : 'live';
      const there = left[place] >= order.quantity;
      if (there) left[place] -= order.quantity;
      // An order whose units MySQL cannot find is written FAILED: it holds nothing.
      if (take.take(unitSource(order.epoch, this.sale), order.quantity)) this.held.push(order.quantity);
      else if (there) this.wronglyFailed.push(`${order.quantity} unit(s) of incarnation ${order.epoch} (${place})`);
    }
    this.sale = applyStockMove(this.sale, take.move);
  }

  /** MySQL refuses one hand-off (the buyer's slot is taken): written FAILED, its units given back. */
  writeFailed(index: number): void {
    const [order] = this.unwritten.splice(index % Math.max(1, this.unwritten.length), 1);
    if (order) this.sale = applyStockMove(this.sale, failedOrderMove(this.sale, order.epoch, order.quantity));
  }

  /** A holding order is cancelled or expires. */
  giveBack(index: number): void {
    const [quantity] = this.held.splice(index % Math.max(1, this.held.length), 1);
    if (quantity !== undefined) this.sale = applyStockMove(this.sale, returnedUnitsMove(this.sale, quantity));
  }

  /** Redis loses the sale (`lostHandOffs` of the unwritten ones go with it); the next incarnation opens. */
  loseRedis(lostHandOffs: number): void {
    this.unwritten.splice(0, lostHandOffs);
    this.sale = openNextIncarnation(this.sale);
    this.redis = { epoch: this.sale.redisEpoch, balance: 0 };
  }

  settle(): void {
    this.sale = settleInDoubt(this.sale).sale;
  }

  get heldUnits(): number {
    return this.held.reduce((sum, quantity) => sum + quantity, 0);
  }
}

const step = fc.oneof(
  fc.record({
    kind: fc.constant('lease' as const),
    max: fc.integer({ min: 1, max: 20 }),
    buckets: fc.integer({ min: 1, max: 4 }),
    spread: fc.boolean(),
  }),
  fc.record({ kind: fc.constant('reserve' as const), quantity: fc.integer({ min: 1, max: 3 }) }),
  fc.record({ kind: fc.constant('write' as const), count: fc.integer({ min: 1, max: 8 }) }),
  fc.record({ kind: fc.constant('fail' as const), index: fc.nat() }),
  fc.record({ kind: fc.constant('give-back' as const), index: fc.nat() }),
  fc.record({ kind: fc.constant('lose-redis' as const), lost: fc.integer({ min: 0, max: 3 }) }),
  fc.record({ kind: fc.constant('settle' as const) }),
);

/** Long enough lives for the interleavings that matter (a loss, then settlement, then a straggler). */
const lives = fc.array(step, { minLength: 10, maxLength: 80, size: 'max' });

type Step = typeof step extends fc.Arbitrary<infer S> ? S : never;

function play(life: SaleLife, s: Step): void {
  switch (s.kind) {
    case 'lease':
      return life.lease(s.max, s.buckets, s.spread);
    case 'reserve':
      return life.reserve(s.quantity);
    case 'write':
      return life.writeBatch(s.count);
    case 'fail':
      return life.writeFailed(s.index);
    case 'give-back':
      return life.giveBack(s.index);
    case 'lose-redis':
      return life.loseRedis(s.lost);
    case 'settle':
      return life.settle();
  }
}

/** Generated sale lives of a generated stock: `afterStep` after each step, then `atTheEnd`. */
function everyLife(afterStep: (life: SaleLife) => void, atTheEnd: (life: SaleLife) => void = () => undefined): void {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 60 }), lives, (stock, steps) => {
      const life = new SaleLife(stock);
      for (const s of steps) {
        play(life, s);
        afterStep(life);
      }
      atTheEnd(life);
    }),
    { numRuns: 300 },
  );
}

describe('the stock arithmetic (fast-check over whole sale lives)', () => {
  it('conserves every unit: available + leased + held == stock, nothing negative, in doubt within leased', () => {
    everyLife((life) => {
      const { stock, available, leased, inDoubt } = life.sale;
      expect(available + leased + life.heldUnits).toBe(stock);
      expect(Math.min(available, leased, inDoubt)).toBeGreaterThanOrEqual(0);
      expect(inDoubt).toBeLessThanOrEqual(leased);
    });
  });

  it('Redis can sell exactly the live leases: its balance and unwritten reservations of the current incarnation', () => {
    everyLife((life) => {
      const current = life.unwritten
        .filter((order) => order.epoch === life.sale.redisEpoch)
        .reduce((sum, order) => sum + order.quantity, 0);
      expect(life.redis.balance + current).toBe(life.sale.leased - life.sale.inDoubt);
    });
  });

  it('writes every order whose units are where its incarnation left them; the current one is never refused', () => {
    everyLife(
      (life) => expect(life.wronglyFailed).toEqual([]),
      (life) => {
        // Redis sold only leased units: writing what is unwritten now, with no loss first, refuses none.
        life.unwritten = life.unwritten.filter((order) => order.epoch === life.sale.redisEpoch);
        const heldBefore = life.held.length;
        const current = life.unwritten.length;
        life.writeBatch(current);
        expect(life.held.length - heldBefore).toBe(current);
      },
    );
  });

  it('takes an order from where its incarnation left its units', () => {
    const sale = { available: 5, leased: 7, inDoubt: 3, redisEpoch: 4, settledEpoch: 2 };
    expect([1, 2, 3, 4].map((epoch) => unitSource(epoch, sale))).toEqual([
      'available',
      'available',
      'in-doubt',
      'lease',
    ]);
    const take = new StockTake(sale);
    expect(take.take('lease', 4)).toBe(true);
    expect(take.take('lease', 1)).toBe(false); // 7 leased, 3 of them in doubt: 4 live
    expect(take.take('in-doubt', 3)).toBe(true);
    expect(take.move).toEqual({ available: 0, leased: -7, inDoubt: -3 });
  });

  it('gives a cancelled order back only up to the stock (an oversold sale drops the surplus)', () => {
    const sale = { stock: 10, available: 2, leased: 6, inDoubt: 0, redisEpoch: 1, settledEpoch: 0 };
    expect(returnedUnitsMove(sale, 1).available).toBe(1);
    expect(returnedUnitsMove(sale, 5).available).toBe(2);
    expect(returnedUnitsMove({ ...sale, available: 4 }, 1).available).toBe(0);
  });
});
