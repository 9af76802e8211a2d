import type { OrdersQueue } from '@flash-sale/queue';
import { Logger } from '@nestjs/common';
import type { SaleLayout } from '@flash-sale/domain';
import { type SaleActivity, singleBucketSale } from '@flash-sale/redis';
import { WriteOrdersNudge } from './write-orders-nudge';

/** In-memory stand-ins for the queue and the activity index: they record what the nudge asked. */
function fakes(options: { queueFails?: boolean } = {}) {
  const wakeUps: string[][] = [];
  const touched: string[][] = [];
  const orders = {
    wakeWriters: async (sales: readonly SaleLayout[]) => {
      if (options.queueFails) throw new Error('Redis is down');
      wakeUps.push(sales.map((sale) => sale.id));
    },
  } as unknown as OrdersQueue;
  const activity = {
    touch: async (saleIds: Iterable<string>) => void touched.push([...saleIds]),
  } as unknown as SaleActivity;
  return { nudge: new WriteOrdersNudge(orders, activity), wakeUps, touched };
}

describe('WriteOrdersNudge', () => {
  it('wakes each sale of a window once, in one call, and answers every caller only after it', async () => {
    const { nudge, wakeUps, touched } = fakes();
    const answered: string[] = [];
    const calls = ['1', '2', '1', '1', '3'].map((saleId) =>
      nudge.nudge(singleBucketSale(saleId)).then(() => answered.push(`${saleId}:${wakeUps.length}`)),
    );
    expect(wakeUps).toEqual([]); // nothing is sent before the window closes
    await Promise.all(calls);
    expect(wakeUps).toEqual([['1', '2', '3']]);
    expect(touched).toEqual([['1', '2', '3']]);
    // Every caller saw the wake-up already sent when its promise resolved.
    expect(answered.every((entry) => entry.endsWith(':1'))).toBe(true);
  });

  it('wakes a sale with several buckets once: one job writes all its streams', async () => {
    const { nudge, wakeUps } = fakes();
    const sale = { id: '4', buckets: 3 };
    await Promise.all([nudge.nudge(sale), nudge.nudge(sale), nudge.nudge(singleBucketSale('5'))]);
    expect(wakeUps).toEqual([['4', '5']]);
  });

  it('starts a new window after one was sent', async () => {
    const { nudge, wakeUps } = fakes();
    await nudge.nudge(singleBucketSale('7'));
    await Promise.all([nudge.nudge(singleBucketSale('7')), nudge.nudge(singleBucketSale('8'))]);
    expect(wakeUps).toEqual([['7'], ['7', '8']]);
  });

  it('still answers its callers when the queue cannot be reached (the hand-off sweep wakes the writer)', async () => {
    const { nudge, wakeUps } = fakes({ queueFails: true });
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    await expect(nudge.nudge(singleBucketSale('9'))).resolves.toBeUndefined();
    expect(wakeUps).toEqual([]);
    expect(warn).toHaveBeenCalledWith('Could not nudge the order writers: Redis is down');
    warn.mockRestore();
  });
});
