import { loadConfig } from '@flash-sale/config';
import type { SaleLayouts, SaleRepository } from '@flash-sale/db';
import type { OrdersQueue } from '@flash-sale/queue';
import type { SaleLayout } from '@flash-sale/domain';
import { type HandoffStream, type SaleActivity, singleBucketSale } from '@flash-sale/redis';
import { Logger } from '@nestjs/common';
import { HandoffSweep } from './handoff-sweep';

const MINUTE = 60_000;
const START = Date.UTC(2025, 0, 1, 12);

/** The sales as the sweep sees them: activity marks, sales in their window, hand-off backlogs in Redis. */
class FakeSales {
  readonly marks = new Map<string, number>();
  inWindow: string[] = [];
  readonly backlogs = new Map<string, number>();
  readonly windowReads: { from: Date; to: Date }[] = [];
  readonly woken: string[][] = [];

  readonly activity = {
    activeSince: async (since: number) => [...this.marks].filter(([, at]) => at >= since).map(([saleId]) => saleId),
    touch: async (saleIds: readonly string[], at: number) => saleIds.forEach((saleId) => this.marks.set(saleId, at)),
  };
  readonly saleRepository = {
    redisBackedOpenBetween: async (from: Date, to: Date) => {
      this.windowReads.push({ from, to });
      return this.inWindow;
    },
  };
  readonly handoff = { backlog: async (sale: SaleLayout) => this.backlogs.get(sale.id) ?? 0 };
  readonly layouts = { of: async (saleId: string) => singleBucketSale(saleId) };
  readonly ordersQueue = {
    wakeWriters: async (sales: readonly SaleLayout[]) => void this.woken.push(sales.map((sale) => sale.id)),
  };
}

describe('HandoffSweep', () => {
  const config = loadConfig({ RECOVERY_INTERVAL_MS: '30000' });
  let sales: FakeSales;
  let sweep: HandoffSweep;
  let now: number;

  beforeEach(() => {
    sales = new FakeSales();
    sweep = new HandoffSweep(
      sales.saleRepository as unknown as SaleRepository,
      sales.handoff as unknown as HandoffStream,
      sales.activity as unknown as SaleActivity,
      sales.ordersQueue as unknown as OrdersQueue,
      sales.layouts as unknown as SaleLayouts,
      config,
    );
    now = START;
    jest.spyOn(Date, 'now').mockImplementation(() => now);
    jest.spyOn(Logger.prototype, 'debug').mockImplementation(() => undefined);
  });

  afterEach(() => jest.restoreAllMocks());

  it('wakes the writers of the active sales that have a backlog, in one call, and keeps them marked', async () => {
    sales.marks
      .set('1', now - MINUTE)
      .set('2', now - MINUTE)
      .set('3', now - 2 * MINUTE);
    sales.backlogs.set('1', 5).set('3', 1);

    expect(await sweep.run()).toBe(2);
    expect(sales.woken).toEqual([['1', '3']]);
    expect(sales.marks.get('1')).toBe(now);
    expect(sales.marks.get('3')).toBe(now);
    expect(sales.marks.get('2')).toBe(now - MINUTE);
  });

  it('leaves alone sales marked longer than 15 minutes ago, and wakes no writer when nothing waits', async () => {
    sales.marks.set('1', now - 16 * MINUTE).set('2', now - MINUTE);
    sales.backlogs.set('1', 5);

    expect(await sweep.run()).toBe(0);
    expect(sales.woken).toEqual([]);
  });

  it('looks at every sale in its window on the first run, then only every 5 minutes', async () => {
    sales.inWindow = ['9'];
    sales.backlogs.set('9', 2);

    expect(await sweep.run()).toBe(1);
    expect(sales.woken).toEqual([['9']]);
    // Open by the next run, or ended within the hour.
    expect(sales.windowReads).toEqual([{ from: new Date(now - 60 * MINUTE), to: new Date(now + 30_000) }]);

    sales.backlogs.delete('9');
    sales.marks.clear();
    sales.inWindow = ['9', '10'];
    sales.backlogs.set('10', 1);
    now += 4 * MINUTE;
    expect(await sweep.run()).toBe(0); // '10' is unmarked and the full pass is not due
    expect(sales.windowReads).toHaveLength(1);

    now += MINUTE;
    expect(await sweep.run()).toBe(1);
    expect(sales.windowReads).toHaveLength(2);
    expect(sales.woken).toEqual([['9'], ['10']]);
  });
});
