import type { SaleLayout } from '@flash-sale/domain';
import type { Job, Queue } from 'bullmq';
import { writeOrdersJob, type WriteOrdersJobData } from './write-orders.job';

/** How many of each state's newest jobs `forgetSale` looks through: a warm-up's jobs are among the latest. */
const RECENT_JOBS = 200;

/** The `orders` queue as its producers use it: waking the order writers of sales. */
export class OrdersQueue {
  constructor(
    /** The BullMQ queue itself, for the queue board, metrics and readiness. */
    readonly queue: Queue,
    private readonly jobAttempts: number,
  ) {}

  /** One `write-orders` job per sale (deduplicated by BullMQ: a sale whose job waits gets no second one). */
  async wakeWriters(sales: readonly SaleLayout[]): Promise<void> {
    if (sales.length === 1) {
      // Nearly every nudge names one hot sale: a plain add is one script call, where addBulk wraps even
      // one job in a MULTI pipeline.
      const job = writeOrdersJob(sales[0]!, this.jobAttempts);
      await this.queue.add(job.name, job.data, job.opts);
    } else if (sales.length > 1) {
      await this.queue.addBulk(sales.map((sale) => writeOrdersJob(sale, this.jobAttempts)));
    }
  }

  /**
   * Removes a removed sale's `write-orders` jobs: waiting ones (no worker is to look for its streams) and
   * those the queue keeps as history, among its newest RECENT_JOBS of each state. A job a worker holds
   * right now cannot be removed; it finds nothing to write and ends as history.
   */
  async forgetSale(saleId: string): Promise<void> {
    const jobs: Job[] = await this.queue.getJobs(
      ['waiting', 'prioritized', 'delayed', 'paused', 'completed', 'failed'],
      0,
      RECENT_JOBS - 1,
      false,
    );
    const ofSale = jobs.filter((job) => (job.data as Partial<WriteOrdersJobData>).saleId === saleId);
    await Promise.all(ofSale.map((job) => job.remove().catch(() => undefined)));
  }

  /** Failed `write-orders` jobs of a sale (kept only as a short tail by removeOnFail: a small read). */
  async failedWriterJobs(saleId: string): Promise<number> {
    const failed: Job[] = await this.queue.getFailed(0, 999);
    return failed.filter((job) => (job.data as Partial<WriteOrdersJobData>).saleId === saleId).length;
  }
}

/** The `order-lifecycle` queue: its job schedulers (stored in Redis, so each run happens once). */
export class LifecycleQueue {
  constructor(readonly queue: Queue) {}

  /**
   * Calls `listener` each time the queue's Redis connection is ready again after a loss. A Redis that
   * comes back without its data has forgotten the schedulers too: this is when to register them again.
   */
  async onReconnect(listener: () => void): Promise<void> {
    // Resolves once the first connection is ready, so every later 'ready' is a reconnect.
    (await this.queue.client).on('ready', listener);
  }

  /** Idempotent: registering a scheduler again only updates it. */
  async schedule(jobName: string, everyMs: number, keep: { completed: number; failed: number }): Promise<void> {
    await this.queue.upsertJobScheduler(
      jobName,
      { every: everyMs },
      { name: jobName, opts: { removeOnComplete: keep.completed, removeOnFail: keep.failed } },
    );
  }
}

/** Every queue of the product, for metrics, readiness and the queue board. */
export class ProductQueues {
  readonly all: readonly Queue[];

  constructor(orders: OrdersQueue, lifecycle: LifecycleQueue) {
    this.all = [orders.queue, lifecycle.queue];
  }
}
