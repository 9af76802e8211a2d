// A redis-lock holder in a process of its own, so a test can really stop it (SIGSTOP) or kill it
// (SIGKILL) while it holds a sale's lock. It runs the strategy's protocol with the built libraries:
// take the lock (its watchdog renewing it), claim the grant's fencing token on the sale's row, read the
// stock in a transaction — then wait for "write" on stdin to take one unit, fenced, and release.
// Every step is reported as one JSON line on stdout.
// Environment: REDIS_URL, REDIS_KEY_PREFIX, DATABASE_URL, SALE_ID, LOCK_TTL_MS.
import { createInterface } from 'node:readline';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { createRedisClient, KeyBuilder, SaleLocks } = require('@flash-sale/redis');
const { dataSourceOptions, SaleStockRepository, StrategyPurchaseRepository } = require('@flash-sale/db');
const { DataSource } = require('typeorm');

const { REDIS_URL, REDIS_KEY_PREFIX, DATABASE_URL, SALE_ID, LOCK_TTL_MS } = process.env;
const report = (event) => process.stdout.write(`${JSON.stringify(event)}\n`);

const redis = createRedisClient({ url: REDIS_URL, clusterNodes: [] });
const dataSource = new DataSource(dataSourceOptions({ url: DATABASE_URL, poolSize: 2 }));
await dataSource.initialize();
const locks = new SaleLocks(redis, new KeyBuilder(REDIS_KEY_PREFIX));
const repository = new StrategyPurchaseRepository(dataSource, new SaleStockRepository());
const commands = createInterface({ input: process.stdin })[Symbol.asyncIterator]();

const lock = await locks.tryAcquire(SALE_ID, Number(LOCK_TTL_MS));
if (!lock) {
  report({ event: 'busy' });
  process.exit(1);
}
const claimed = await repository.claimFence(SALE_ID, lock.token);
report({ event: 'locked', token: lock.token, claimed });
await repository.inTransaction(async (statements) => {
  const available = await statements.availableUnguarded(SALE_ID);
  report({ event: 'read', available });
  await commands.next(); // "write"
  const renewed = await lock.renew();
  const landed = await statements.takeUnitsFenced(SALE_ID, 1, lock.token);
  report({ event: 'write', renewed, lost: lock.lost, landed });
}, 'READ COMMITTED');
report({ event: 'released', released: await lock.release() });
await dataSource.destroy();
redis.disconnect();
