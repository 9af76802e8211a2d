import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { QueueName, writeOrdersJob } from '@flash-sale/queue';
import { createRedisClient, HANDOFF_GROUP, type RedisClient, singleBucketSale } from '@flash-sale/redis';
import { Queue } from 'bullmq';
import { exited } from '../support/child-process';
import { countRows, createLiveSale, reserveForUsers, waitFor } from '../support/fixtures';
import { expectEveryOrderWrittenOnce } from '../support/written-orders';
import { useStoreWorld } from '../support/stack-world';

const WORKER_ENTRY = join(__dirname, '..', '..', 'apps', 'worker', 'dist', 'main.js');

/** The real worker binary, as production runs it, in its own process (so it can be SIGKILLed). */
function startWorker(env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, [WORKER_ENTRY], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  child.stderr?.on('data', (chunk: Buffer) => process.stderr.write(`[worker ${child.pid}] ${chunk.toString()}`));
  return child;
}

describe('a worker SIGKILLed mid-batch while 1,000 hand-offs drain (real processes, MariaDB, Redis)', () => {
  let queueConnection: RedisClient;
  let queue: Queue;
  const children: ChildProcess[] = [];

  beforeAll(() => {
    if (!existsSync(WORKER_ENTRY)) throw new Error(`${WORKER_ENTRY} is missing: build first (npm test does)`);
  });

  // Registered before the world's: jest runs `afterAll` hooks in the order they were registered, and the
  // workers and the queue are gone before the world drops the database and the keys under them.
  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await Promise.all(children.map(exited));
    await queue?.close();
    queueConnection?.disconnect();
  });

  // A slow worker (small batches) so that the kill lands mid-drain, a short lock so that the job it
  // held is retaken quickly, and a short idle time before its unacknowledged entries are taken over.
  const w = useStoreWorld({
    env: { ORDER_BATCH_SIZE: '4', WORKER_LOCK_DURATION_MS: '2000', HANDOFF_CLAIM_IDLE_MS: '1000' },
  });

  beforeAll(() => {
    queueConnection = createRedisClient(w.testEnv.config.redis, { maxRetriesPerRequest: null });
    queue = new Queue(QueueName.Orders, { prefix: w.testEnv.config.queue.prefix, connection: queueConnection });
  });

  it('beside a live worker, with the default lock and claim times: the sale is written again within 5 s', async () => {
    const { db, keys, scripts, saleRedis } = w;
    const saleId = await createLiveSale(db, scripts, saleRedis, { stock: 3000 });
    await reserveForUsers(scripts, saleRedis, saleId, 3000);
    const defaults = { ...w.testEnv.env, WORKER_LOCK_DURATION_MS: '', HANDOFF_CLAIM_IDLE_MS: '' };
    const rows = () => countRows(db, 'SELECT COUNT(*) AS n FROM orders WHERE sale_id = ?', [saleId]);

    const workers = [startWorker(defaults), startWorker(defaults)];
    children.push(...workers);
    await waitFor(
      'both workers listening',
      () => queue.getWorkersCount(),
      (n) => n === 2,
      30_000,
    );
    const job = writeOrdersJob(singleBucketSale(saleId), w.testEnv.config.worker.jobAttempts);
    await queue.add(job.name, job.data, job.opts);
    // The worker writing the sale is the consumer holding its entries (named host:pid:…).
    const holder = await waitFor(
      'a worker holding entries',
      async () => {
        const consumers = (await w.redis
          .xinfo('CONSUMERS', keys.sale(saleId).handoff, HANDOFF_GROUP)
          .catch(() => [])) as unknown[][]; // no group before the first read
        const busy = consumers.find((fields) => Number(fields[fields.indexOf('pending') + 1]) > 0);
        const pid = busy && Number(String(busy[busy.indexOf('name') + 1]).split(':')[1]);
        return workers.find((worker) => worker.pid === pid);
      },
      Boolean,
      30_000,
    );
    holder!.kill('SIGKILL');
    await exited(holder!);
    const killedAt = Date.now();
    const writtenAtKill = await rows();
    expect(writtenAtKill).toBeLessThan(3000); // the kill landed mid-drain
    // The live worker goes on within seconds: the dead job's lock expires, the stalled check moves the
    // job, and the dead worker's entries are claimed once idle.
    await waitFor('writing resumed', rows, (n) => n > writtenAtKill + 4, 30_000);
    const stalledForMs = Date.now() - killedAt;
    await waitFor('all 3,000 orders', rows, (n) => n >= 3000, 60_000);
    expect(stalledForMs).toBeLessThan(5_000);
    expect(await countRows(db, 'SELECT COUNT(DISTINCT order_no) AS n FROM orders WHERE sale_id = ?', [saleId])).toBe(
      3000,
    );
  });

  it('restarted, it ends with 1,000 orders, each exactly once', async () => {
    const { db, keys, scripts, saleRedis, handoff } = w;
    const saleId = await createLiveSale(db, scripts, saleRedis, { stock: 1000 });
    const orders = await reserveForUsers(scripts, saleRedis, saleId, 1000);
    expect(await handoff.backlog(singleBucketSale(saleId))).toBe(1000);
    const job = writeOrdersJob(singleBucketSale(saleId), w.testEnv.config.worker.jobAttempts);
    await queue.add(job.name, job.data, job.opts);
    const streamKey = keys.sale(saleId).handoff;
    const unacknowledged = async () => Number(((await w.redis.xpending(streamKey, HANDOFF_GROUP)) as [number])[0]);
    const rows = () => countRows(db, 'SELECT COUNT(*) AS n FROM orders WHERE sale_id = ?', [saleId]);

    const first = startWorker(w.testEnv.env);
    children.push(first);
    await waitFor('the first orders', rows, (n) => n > 0, 30_000);
    first.kill('SIGKILL');
    await exited(first);
    const writtenBeforeKill = await rows();
    expect(writtenBeforeKill).toBeLessThan(1000); // the kill really landed mid-drain…
    // …with entries the dead worker was given and never acknowledged (the batch it was writing).
    expect(await unacknowledged()).toBeGreaterThan(0);

    children.push(startWorker(w.testEnv.env));
    await waitFor('all 1,000 orders', rows, (n) => n >= 1000, 60_000);
    await waitFor(
      'the queue to settle',
      () => queue.getJobCounts('waiting', 'active', 'delayed', 'failed'),
      (counts) => counts['waiting'] === 0 && counts['active'] === 0 && counts['delayed'] === 0,
      30_000,
    );

    await expectEveryOrderWrittenOnce(db, handoff, saleId, orders);
    expect(await unacknowledged()).toBe(0);
    expect(await countRows(db, 'SELECT available AS n FROM sales WHERE id = ?', [saleId])).toBe(0);
    expect((await queue.getJobCounts('failed'))['failed']).toBe(0);
  });
});
