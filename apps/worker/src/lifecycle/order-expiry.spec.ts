import type { OrderLifecycle, StockLeases } from '@flash-sale/stock';
import type { OrderExpiryRepository, OverdueOrder, SaleLayouts } from '@flash-sale/db';
import { type ReservationScripts, type SaleBucket, singleBucketSale } from '@flash-sale/redis';
import { Logger } from '@nestjs/common';
import { OrderExpiry } from './order-expiry';

const START = Date.UTC(2025, 0, 1, 12);

interface StoredOrder {
  saleId: string;
  status: 'PENDING_PAYMENT' | 'EXPIRED';
  version: number;
  quantity: number;
  expiresAt: number;
}

/**
 * The orders table and the stores around it, in memory: the reads the sweep asks for, the
 * compare-and-set moves (one "transaction" per call), the releases in Redis and the lease top-ups.
 */
class FakeStores {
  readonly orders = new Map<string, StoredOrder>();
  readonly pageReads: { saleId: string; limit: number }[] = [];
  /** How often the sweep asked which sales have overdue orders. */
  salesReads = 0;
  readonly transactions: { saleId: string; size: number }[] = [];
  readonly released: string[] = [];
  readonly toppedUp: string[] = [];
  /** Sales whose transactions fail (optimistic-lock retries exhausted, say). */
  readonly failingSales = new Set<string>();
  readonly failingReleases = new Set<string>();
  /** How long each transaction takes, on the test's clock. */
  transactionMs = 0;

  constructor(private readonly clock: { now: number }) {}

  add(saleId: string, count: number, expiresAt: number): void {
    for (let i = 0; i < count; i++) {
      const orderNo = `S${saleId}-${String(this.orders.size).padStart(6, '0')}`;
      this.orders.set(orderNo, { saleId, status: 'PENDING_PAYMENT', version: 0, quantity: 1, expiresAt });
    }
  }

  count(saleId: string, status: StoredOrder['status']): number {
    return [...this.orders.values()].filter((order) => order.saleId === saleId && order.status === status).length;
  }

  private due(dueBy: Date): [string, StoredOrder][] {
    return [...this.orders]
      .filter(([, order]) => order.status === 'PENDING_PAYMENT' && order.expiresAt <= dueBy.getTime())
      .sort(([, a], [, b]) => a.expiresAt - b.expiresAt);
  }

  readonly repository = {
    salesWithOverdueOrders: async (dueBy: Date) => {
      this.salesReads += 1;
      return [...new Set(this.due(dueBy).map(([, order]) => order.saleId))];
    },
    overdueOrders: async (saleId: string, dueBy: Date, limit: number): Promise<OverdueOrder[]> => {
      this.pageReads.push({ saleId, limit });
      return this.due(dueBy)
        .filter(([, order]) => order.saleId === saleId)
        .slice(0, limit)
        .map(([orderNo, order]) => ({ orderNo, userId: 'buyer', version: order.version, quantity: order.quantity }));
    },
  };

  readonly lifecycle = {
    expireOverdue: async (saleId: string, batch: readonly OverdueOrder[], dueBy: Date) => {
      this.clock.now += this.transactionMs;
      if (this.failingSales.has(saleId)) throw new Error('Gave up after 5 optimistic-lock conflicts or deadlocks');
      this.transactions.push({ saleId, size: batch.length });
      return batch.filter(({ orderNo, version }) => {
        const order = this.orders.get(orderNo);
        const won =
          order?.status === 'PENDING_PAYMENT' && order.version === version && order.expiresAt <= dueBy.getTime();
        if (won) Object.assign(order, { status: 'EXPIRED', version: version + 1 });
        return won;
      });
    },
  };

  readonly scripts = {
    release: async (_bucket: SaleBucket, orderNo: string) => {
      if (this.failingReleases.has(orderNo)) throw new Error('Connection is closed.');
      this.released.push(orderNo);
      return 'released' as const;
    },
  };

  readonly leases = { topUp: async (saleId: string) => void this.toppedUp.push(saleId) };
}

describe('OrderExpiry.sweep', () => {
  const clock = { now: START };
  let stores: FakeStores;
  let expiry: OrderExpiry;

  beforeEach(() => {
    clock.now = START;
    stores = new FakeStores(clock);
    expiry = new OrderExpiry(
      stores.repository as unknown as OrderExpiryRepository,
      stores.lifecycle as unknown as OrderLifecycle,
      stores.scripts as unknown as ReservationScripts,
      stores.leases as unknown as StockLeases,
      { of: async (saleId: string) => singleBucketSale(saleId) } as unknown as SaleLayouts,
    );
    jest.spyOn(Date, 'now').mockImplementation(() => clock.now);
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
  });

  afterEach(() => jest.restoreAllMocks());

  it('expires what is due, sale by sale, 100 orders per transaction; never an order before its deadline', async () => {
    stores.add('1', 250, START - 1_000);
    stores.add('1', 3, START + 1_000);
    stores.add('2', 1, START);

    expect(await expiry.sweep(new Date(START))).toBe(251);
    expect(stores.transactions).toEqual([
      { saleId: '1', size: 100 },
      { saleId: '1', size: 100 },
      { saleId: '1', size: 50 },
      { saleId: '2', size: 1 },
    ]);
    expect(stores.count('1', 'PENDING_PAYMENT')).toBe(3);
    expect(stores.released).toHaveLength(251);
    // The units are back in MySQL: each sale's lease is topped up once.
    expect(stores.toppedUp).toEqual(['1', '2']);
  });

  it('reads a sale 500 orders at a time until a short page', async () => {
    stores.add('1', 1_200, START - 1_000);

    expect(await expiry.sweep(new Date(START))).toBe(1_200);
    expect(stores.pageReads).toEqual([
      { saleId: '1', limit: 500 },
      { saleId: '1', limit: 500 },
      { saleId: '1', limit: 500 },
    ]);
    expect(stores.transactions).toHaveLength(12);
  });

  it('nothing due: one read, no transaction, no top-up', async () => {
    stores.add('1', 2, START + 60_000);

    expect(await expiry.sweep(new Date(START))).toBe(0);
    expect(stores.salesReads).toBe(1);
    expect(stores.pageReads).toEqual([]);
    expect(stores.transactions).toEqual([]);
    expect(stores.toppedUp).toEqual([]);
  });

  it('stops after its time budget (at the end of a page) and the next run goes on where it stopped', async () => {
    stores.add('1', 600, START - 1_000);
    stores.add('2', 10, START - 1_000);
    stores.transactionMs = 300;

    // A page of 500 is 5 transactions (1.5 s), past the 1 s budget: the run ends after it.
    expect(await expiry.sweep(new Date(START), 1_000)).toBe(500);
    expect(stores.count('2', 'PENDING_PAYMENT')).toBe(10);

    expect(await expiry.sweep(new Date(START), 1_000)).toBe(110);
    expect(stores.count('1', 'PENDING_PAYMENT') + stores.count('2', 'PENDING_PAYMENT')).toBe(0);
  });

  it('a sale whose batch fails is left alone for 5 s while the other sales expire', async () => {
    stores.add('1', 3, START - 1_000);
    stores.add('2', 4, START - 1_000);
    stores.failingSales.add('1');

    expect(await expiry.sweep(new Date(START))).toBe(4);
    expect(stores.count('1', 'PENDING_PAYMENT')).toBe(3);
    expect(stores.toppedUp).toEqual(['2']);

    stores.failingSales.delete('1');
    clock.now += 4_000;
    expect(await expiry.sweep(new Date(clock.now))).toBe(0); // still deferred
    clock.now += 1_000;
    expect(await expiry.sweep(new Date(clock.now))).toBe(3);
  });

  it('a release that fails in Redis does not fail the sweep: the order stays expired (reconciliation releases it)', async () => {
    stores.add('1', 3, START - 1_000);
    const [first] = stores.orders.keys();
    stores.failingReleases.add(first!);

    expect(await expiry.sweep(new Date(START))).toBe(3);
    expect(stores.count('1', 'EXPIRED')).toBe(3);
    expect(stores.released).toHaveLength(2);
    expect(stores.toppedUp).toEqual(['1']);
  });
});
