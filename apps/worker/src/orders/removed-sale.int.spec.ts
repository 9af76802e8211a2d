import { WarmUpSaleRepository } from '@flash-sale/db';
import { singleBucketSale } from '@flash-sale/redis';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { countRows, createLiveSale, reserveForUsers } from '../../../../test/support/fixtures';
import { useStoreWorld } from '../../../../test/support/stack-world';
import { WorkerModule } from '../worker.module';
import { HandoffDrain } from './handoff-drain';

/**
 * A sale removed while the worker still has its orders to write — the startup warm-up removes its sale
 * (apps/api/src/ops/warm-up-sale.ts) whether or not a worker has written its orders yet. Real MariaDB and
 * Redis, the worker's own drain.
 */
describe('a sale removed under the worker (real MariaDB and Redis)', () => {
  let worker: INestApplicationContext;

  // Registered before the world's: jest runs `afterAll` hooks in the order they were registered, and the
  // worker closes before the world drops the database and the keys under it.
  afterAll(() => worker?.close());

  const w = useStoreWorld();

  beforeAll(async () => {
    worker = await NestFactory.createApplicationContext(WorkerModule.forRoot(w.testEnv.config), { logger: false });
  });

  /** A live sale of purpose `warm-up` with `count` reservations waiting in its hand-off stream. */
  async function warmUpSaleWithReservations(count: number): Promise<string> {
    const saleId = await createLiveSale(w.db, w.scripts, w.saleRedis, { stock: count });
    await w.db.query("UPDATE sales SET purpose = 'warm-up' WHERE id = ?", [saleId]);
    await reserveForUsers(w.scripts, w.saleRedis, saleId, count);
    expect(await w.handoff.backlog(singleBucketSale(saleId))).toBe(count);
    return saleId;
  }

  it('a batch in hand when the sale is removed is dropped: acknowledged, no order row, nothing freed in Redis', async () => {
    const saleId = await warmUpSaleWithReservations(5);
    expect(await worker.get(WarmUpSaleRepository).remove(saleId)).toBe(true);

    const drained = await worker.get(HandoffDrain).drain(singleBucketSale(saleId));

    expect(drained.written).toBe(5);
    expect(await w.handoff.backlog(singleBucketSale(saleId))).toBe(0);
    expect(await countRows(w.db, 'SELECT COUNT(*) AS n FROM orders WHERE sale_id = ?', [saleId])).toBe(0);
    expect(await countRows(w.db, 'SELECT COUNT(*) AS n FROM sales WHERE id = ?', [saleId])).toBe(0);
  });

  it("a sale's keys deleted before a write-orders job for it runs: the drain finds nothing and makes no stream", async () => {
    const saleId = await warmUpSaleWithReservations(3);
    await worker.get(WarmUpSaleRepository).remove(saleId);
    await w.saleRedis.reset(singleBucketSale(saleId));

    const drained = await worker.get(HandoffDrain).drain(singleBucketSale(saleId));

    expect(drained.written).toBe(0);
    expect(await w.redis.exists(w.keys.sale(saleId).handoff)).toBe(0);
  });

  it('only a warm-up sale is ever removed', async () => {
    const saleId = await createLiveSale(w.db, w.scripts, w.saleRedis, { stock: 1 });
    await expect(worker.get(WarmUpSaleRepository).remove(saleId)).rejects.toThrow('not a warm-up sale');
    expect(await countRows(w.db, 'SELECT COUNT(*) AS n FROM sales WHERE id = ?', [saleId])).toBe(1);
  });
});
