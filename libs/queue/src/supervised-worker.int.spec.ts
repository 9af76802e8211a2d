import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { Queue, Worker } from 'bullmq';
import { waitFor } from '../../../test/support/fixtures';
import { QueueName } from './queue-names';
import { QueueWorkers } from './queue.module';
import type { SupervisedWorker } from './supervised-worker';

const REDIS_URL = process.env['TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The supervision of BullMQ workers (supervised-worker.ts) on a real Redis and real BullMQ workers. The
 * stuck worker is made by what a lost blocking command leaves behind: BullMQ's wait for the next job never
 * settles (its private `waitForJob`, wedged for the first worker only; the one that replaces it is untouched).
 */
describe('a supervised BullMQ worker (real Redis)', () => {
  let connection: Redis;
  let queue: Queue;
  let prefix: string;
  const started: SupervisedWorker[] = [];

  beforeEach(() => {
    prefix = `{test-supervised-${randomBytes(4).toString('hex')}}`;
    connection = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
    queue = new Queue(QueueName.Orders, { connection, prefix });
  });

  /** Each worker on a connection of its own, as QueueModule makes them. */
  let queueWorkers: QueueWorkers | undefined;
  const workers = () =>
    (queueWorkers ??= new QueueWorkers(connection, prefix, () => new Redis(REDIS_URL, { maxRetriesPerRequest: null }), {
      stuckAfterMs: 1_000,
      checkEveryMs: 200,
    }));

  afterEach(async () => {
    jest.restoreAllMocks();
    for (const supervised of started.splice(0)) await workers().close(supervised);
    queueWorkers = undefined;
    await queue.obliterate({ force: true });
    await queue.close();
    connection.disconnect();
  });

  /** A supervised worker, as the worker app starts one, with short watch intervals; the jobs it runs and its replacements. */
  async function startWorker(options: { concurrency: number; runMs?: number }) {
    const ran: string[] = [];
    const replaced: string[] = [];
    const supervised = await workers().start(
      QueueName.Orders,
      async (job) => {
        ran.push(job.id!);
        if (options.runMs) await sleep(options.runMs);
      },
      { concurrency: options.concurrency },
      () => undefined,
      (message) => replaced.push(message),
    );
    started.push(supervised);
    return { supervised, ran, replaced };
  }

  it('a worker that stopped taking jobs while one waits is replaced, and the new one runs the job', async () => {
    const waitForJob = (Worker.prototype as unknown as { waitForJob: (...args: unknown[]) => Promise<number> })
      .waitForJob;
    let stuck: Worker | undefined;
    jest
      .spyOn(Worker.prototype as unknown as { waitForJob: (...args: unknown[]) => Promise<number> }, 'waitForJob')
      .mockImplementation(function (this: Worker, ...args: unknown[]) {
        if (stuck === undefined || stuck === this) {
          // The first worker: its wait never settles.
          stuck = this; // eslint-disable-line @typescript-eslint/no-this-alias -- the worker instance is what is recorded
          return new Promise<number>(() => undefined);
        }
        return waitForJob.apply(this, args);
      });
    const { supervised, ran, replaced } = await startWorker({ concurrency: 4 });
    await waitFor(
      'the first worker to be waiting for a job',
      async () => stuck,
      (worker) => worker !== undefined,
      5_000,
    );
    await sleep(200);
    const job = await queue.add('write-orders', { saleId: '1' });

    await waitFor(
      'the waiting job to run',
      async () => [...ran],
      (done) => done.includes(job.id!),
      15_000,
    );
    expect(supervised.replacements).toBe(1);
    expect(supervised.worker).not.toBe(stuck);
    expect(replaced).toEqual([expect.stringContaining(`job ${job.id} waited`)]);
  }, 30_000);

  it('a worker running as many jobs as its concurrency is not replaced while another waits', async () => {
    const { supervised, ran, replaced } = await startWorker({ concurrency: 1, runMs: 3_000 });
    const first = await queue.add('write-orders', { saleId: '1' });
    await waitFor(
      'the first job to run',
      async () => [...ran],
      (done) => done.includes(first.id!),
      5_000,
    );
    const second = await queue.add('write-orders', { saleId: '2' });
    // The second waits its turn for longer than the watch's threshold, behind a busy worker: no sign.
    await waitFor(
      'the second job to run',
      async () => [...ran],
      (done) => done.includes(second.id!),
      10_000,
    );
    expect(supervised.replacements).toBe(0);
    expect(replaced).toEqual([]);
  }, 30_000);
});
