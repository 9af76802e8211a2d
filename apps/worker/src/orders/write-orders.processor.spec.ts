import { loadConfig } from '@flash-sale/config';
import {
  type OrdersQueue,
  QueueName,
  type QueueWorkers,
  WRITE_ORDERS_JOB,
  type WriteOrdersResult,
} from '@flash-sale/queue';
import type { Job, Processor } from 'bullmq';
import type { HandoffDrain } from './handoff-drain';
import { WriteOrdersProcessor } from './write-orders.processor';

const DRAINED: WriteOrdersResult = { written: 3, batches: [3], batchCount: 1, reclaimed: 0, handedOn: false };

describe('WriteOrdersProcessor', () => {
  const config = loadConfig({ WORKER_CONCURRENCY: '12', WORKER_LOCK_DURATION_MS: '20000' });
  let processor: Processor;
  let options: object;
  let drain: { drain: jest.Mock };
  let woken: unknown[][];

  beforeEach(async () => {
    drain = { drain: jest.fn(async () => DRAINED) };
    woken = [];
    const workers = {
      start: async (name: QueueName, started: Processor, startedWith: object) => {
        expect(name).toBe(QueueName.Orders);
        processor = started;
        options = startedWith;
        return { on: () => undefined };
      },
    };
    const ordersQueue = { wakeWriters: async (buckets: readonly unknown[]) => void woken.push([...buckets]) };
    await new WriteOrdersProcessor(
      drain as unknown as HandoffDrain,
      ordersQueue as unknown as OrdersQueue,
      workers as unknown as QueueWorkers,
      config,
    ).onApplicationBootstrap();
  });

  const job = (name: string, data: object) => ({ name, data }) as Job;

  it('takes its concurrency and stalled-job lock from the config', () => {
    expect(options).toEqual({ concurrency: 12, lockDuration: 20_000, stalledInterval: 10_000 });
  });

  it("a write-orders job drains its sale; one that stopped at its time slice wakes the sale's next writer", async () => {
    expect(await processor(job(WRITE_ORDERS_JOB, { saleId: '4' }))).toEqual(DRAINED);
    expect(drain.drain).toHaveBeenCalledWith({ id: '4', buckets: 1 });
    expect(woken).toEqual([]);

    drain.drain.mockResolvedValueOnce({ ...DRAINED, handedOn: true });
    await processor(job(WRITE_ORDERS_JOB, { saleId: '4' }));
    expect(woken).toEqual([[{ id: '4', buckets: 1 }]]);
  });

  it('a write-orders job of a sale with several buckets drains all its streams', async () => {
    await processor(job(WRITE_ORDERS_JOB, { saleId: '4', buckets: 3 }));
    expect(drain.drain).toHaveBeenCalledWith({ id: '4', buckets: 3 });
  });

  it('a job of another name fails', async () => {
    await expect(processor(job('expire-order', {}))).rejects.toThrow('No handler for job "expire-order" on orders');
    // A name an object has of itself is no handler either.
    await expect(processor(job('toString', {}))).rejects.toThrow('No handler for job "toString" on orders');
  });
});
