import { loadConfig } from '@flash-sale/config';
import type { HandedOffOrder } from '@flash-sale/domain';
import {
  LEGACY_CREATE_ORDER_JOB,
  type OrdersQueue,
  QueueName,
  type QueueWorkers,
  WRITE_ORDERS_JOB,
  type WriteOrdersResult,
} from '@flash-sale/queue';
import type { Job, Processor } from 'bullmq';
import type { HandoffDrain } from './handoff-drain';
import type { OrderWriter } from './order-writer';
import { WriteOrdersProcessor } from './write-orders.processor';

const DRAINED: WriteOrdersResult = { written: 3, batches: [3], batchCount: 1, reclaimed: 0, handedOn: false };

describe('WriteOrdersProcessor', () => {
  const config = loadConfig({ WORKER_CONCURRENCY: '12', WORKER_LOCK_DURATION_MS: '20000' });
  let processor: Processor;
  let options: object;
  let drain: { drain: jest.Mock };
  let writer: { writeBatch: jest.Mock; failAndRelease: jest.Mock };
  let woken: unknown[][];

  beforeEach(() => {
    drain = { drain: jest.fn(async () => DRAINED) };
    writer = { writeBatch: jest.fn(async () => ['created']), failAndRelease: jest.fn(async () => 'rejected') };
    woken = [];
    const workers = {
      start: (name: QueueName, started: Processor, startedWith: object) => {
        expect(name).toBe(QueueName.Orders);
        processor = started;
        options = startedWith;
        return { on: () => undefined };
      },
    };
    const ordersQueue = { wakeWriters: async (buckets: readonly unknown[]) => void woken.push([...buckets]) };
    new WriteOrdersProcessor(
      drain as unknown as HandoffDrain,
      writer as unknown as OrderWriter,
      ordersQueue as unknown as OrdersQueue,
      workers as unknown as QueueWorkers,
      config,
    ).onApplicationBootstrap();
  });

  const job = (name: string, data: object, attemptsMade = 0, attempts = 3) =>
    ({ name, data, attemptsMade, opts: { attempts } }) as Job;

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

  describe('a create-order job left by an earlier version', () => {
    const legacy = {
      orderNo: 'S4-A',
      saleId: '4',
      userId: 'u1',
      quantity: 1,
      slot: 1,
      reservedAt: '2025-01-01T00:00:00Z',
    };
    const asWritten: HandedOffOrder = {
      ...legacy,
      reservedAt: new Date(legacy.reservedAt),
      epoch: 0,
      submitToken: null,
    };

    it('is written as an order of a version before leases', async () => {
      expect(await processor(job(LEGACY_CREATE_ORDER_JOB, legacy))).toEqual({ outcome: 'created' });
      expect(writer.writeBatch).toHaveBeenCalledWith('4', [asWritten]);
    });

    it('failing, is retried by BullMQ; on its last attempt it is written FAILED instead', async () => {
      writer.writeBatch.mockRejectedValue(new Error('connect ECONNREFUSED'));
      await expect(processor(job(LEGACY_CREATE_ORDER_JOB, legacy, 1, 3))).rejects.toThrow('ECONNREFUSED');
      expect(await processor(job(LEGACY_CREATE_ORDER_JOB, legacy, 2, 3))).toEqual({ outcome: 'rejected' });
      expect(writer.failAndRelease).toHaveBeenCalledWith(asWritten, 'RETRIES_EXHAUSTED');
    });
  });

  it('a job of another name fails', () => {
    expect(() => processor(job('expire-order', {}))).toThrow('No handler for job "expire-order" on orders');
  });
});
