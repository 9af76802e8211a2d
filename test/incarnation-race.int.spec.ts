import { StockLeaseRepository, StockLeases } from '@flash-sale/db';
import {
  createRedisClient,
  KeyBuilder,
  type RedisClient,
  ReservationScripts,
  SaleRedisRepository,
} from '@flash-sale/redis';
import type { DataSource } from 'typeorm';
import { createLiveSale } from './support/fixtures';
import { createTestEnv, openDatabase, type TestEnv } from './support/test-env';

/**
 * Two processes over one sale (say the API after a Redis restart and the worker's reconciliation):
 * one restarts the sale's incarnation — MySQL opens the next epoch, then Redis is loaded with it —
 * while the other verifies it in between. The verifier must not take that moment for a loss and
 * restart the sale once more (which would put the fresh lease in doubt).
 */
describe('incarnation restart seen mid-way by another process (real Redis and MariaDB)', () => {
  let testEnv: TestEnv;
  let db: DataSource;
  let redis: RedisClient;
  let saleRedis: SaleRedisRepository;

  /** A process's own lease protocol, as each app builds it. */
  const processLeases = (scripts: ReservationScripts) =>
    new StockLeases(new StockLeaseRepository(db), scripts, saleRedis, { leaseSize: 20, lowWater: 0 });

  beforeAll(async () => {
    testEnv = await createTestEnv();
    db = await openDatabase(testEnv.config);
    redis = createRedisClient(testEnv.config.redis);
    saleRedis = new SaleRedisRepository(redis, new KeyBuilder(testEnv.config.redis.keyPrefix));
  });

  afterAll(async () => {
    await db.destroy();
    redis.disconnect();
    await testEnv.cleanup();
  });

  it('a verification during another process restart leaves the sale on the new incarnation', async () => {
    const keys = new KeyBuilder(testEnv.config.redis.keyPrefix);
    const saleId = await createLiveSale(db, new ReservationScripts(redis, keys), saleRedis, { stock: 40 });
    const epochOf = async () =>
      Number((await db.query('SELECT redis_epoch FROM sales WHERE id = ?', [saleId]))[0].redis_epoch);
    expect(await epochOf()).toBe(1);

    // Process A restarts the sale; its load into Redis is slow (a busy machine), so MySQL names epoch
    // 2 well before Redis holds it.
    const slowScripts = new ReservationScripts(redis, keys);
    const realLoad = slowScripts.load.bind(slowScripts);
    jest.spyOn(slowScripts, 'load').mockImplementation(async (...args) => {
      await new Promise((resolve) => setTimeout(resolve, 300));
      return realLoad(...args);
    });
    const restarting = processLeases(slowScripts).restartIncarnation(saleId, 1);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await epochOf()).toBe(2); // opened in MySQL, not yet in Redis

    // Process B verifies meanwhile.
    const verified = await processLeases(new ReservationScripts(redis, keys)).verifyIncarnation(saleId);
    expect(await restarting).toBe('opened');
    expect(verified).toBe('current');
    expect(await epochOf()).toBe(2);
    expect((await saleRedis.incarnation(saleId))?.epoch).toBe(2);
  });
});
