import { untilReady } from '../../../test/support/test-redis';
import { issueTestToken } from '../../../test/support/private-redis';
import { ErrorCode, OrderNumberGenerator } from '@flash-sale/domain';
import type { Cluster } from 'ioredis';
import { startRedisCluster, type LocalRedisCluster } from '../../../scripts/lib/redis-cluster.mjs';
import { createRedisClient } from './redis-client';
import { ReservationScripts } from './reservation-scripts';
import { KeyBuilder, onlyBucket, singleBucketSale } from './sale-keys';
import { SaleState } from './sale-state';

/** Hash-tagged keys are not an assumption: the scripts run on a real three-master Redis Cluster. */
describe('reservation scripts on a real Redis Cluster', () => {
  let cluster: LocalRedisCluster;
  let client: Cluster;
  const keys = new KeyBuilder('fs-cluster-test');
  const orderNumbers = new OrderNumberGenerator();

  beforeAll(async () => {
    cluster = await startRedisCluster();
    client = createRedisClient({ url: 'redis://unused', clusterNodes: cluster.nodes }) as Cluster;
    await untilReady(client);
  });

  afterAll(async () => {
    client?.disconnect();
    await cluster?.stop();
  });

  it('every key of a sale hashes to one slot, and sales spread over the masters', async () => {
    const slotsBySale = await Promise.all(
      ['1', '2', '3', '4', '5', '6', '7', '8'].map(async (saleId) => {
        const sale = keys.sale(saleId);
        const slots = await Promise.all([...sale.all(), sale.token('t')].map((key) => client.cluster('KEYSLOT', key)));
        return new Set(slots);
      }),
    );
    expect(slotsBySale.every((slots) => slots.size === 1)).toBe(true);
    expect(new Set(slotsBySale.map((slots) => [...slots][0])).size).toBeGreaterThan(1);
  });

  it('sells exactly the stock of several sales at once, each sale on its own slot', async () => {
    const scripts = new ReservationScripts(client, keys);
    const saleRedis = new SaleState(client, keys);
    const saleIds = ['11', '12', '13', '14'];
    const now = Date.now();
    for (const saleId of saleIds) {
      await saleRedis.reset(singleBucketSale(saleId));
      await scripts.load(
        onlyBucket(saleId),
        {
          stock: 50,
          perUserLimit: 1,
          startsAt: new Date(now - 60_000),
          endsAt: new Date(now + 3_600_000),
          epoch: 1,
          windowVersion: 0,
        },
        [],
      );
      // Two leases, as refills would grant them.
      await scripts.grantLease(onlyBucket(saleId), 1, 'lease-1', 30);
      await scripts.grantLease(onlyBucket(saleId), 1, 'lease-2', 20);
    }
    const attempts = await Promise.all(
      saleIds.flatMap((saleId) =>
        Array.from({ length: 200 }, async (_, i) => {
          const userId = `user${i % 150}`;
          const { token } = await issueTestToken(saleRedis, saleId, userId, 60);
          return {
            saleId,
            result: await scripts.reserve({
              bucket: onlyBucket(saleId),
              userId,
              submitToken: token,
              quantity: 1,
              orderNo: orderNumbers.next(saleId),
            }),
          };
        }),
      ),
    );
    for (const saleId of saleIds) {
      const results = attempts.filter((attempt) => attempt.saleId === saleId).map((attempt) => attempt.result);
      expect(results.filter((result) => result.kind === 'reserved')).toHaveLength(50);
      expect(
        results.every(
          (result) =>
            result.kind === 'reserved' ||
            (result.kind === 'refused' && [ErrorCode.SoldOut, ErrorCode.LimitReached].includes(result.code)),
        ),
      ).toBe(true);
      expect(await saleRedis.remaining(singleBucketSale(saleId))).toBe(0);
    }
    const [first] = attempts.filter((attempt) => attempt.result.kind === 'reserved');
    if (first?.result.kind !== 'reserved') throw new Error('expected a reservation');
    expect(await scripts.release(onlyBucket(first.saleId), first.result.orderNo)).toBe('released');
    expect(await scripts.grantLease(onlyBucket(first.saleId), 1, 'lease-3', 1)).toEqual({
      kind: 'granted',
      balance: 1,
    });
  });
});
