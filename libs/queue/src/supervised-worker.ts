import type { Job, Processor, Queue, Worker, WorkerListener } from 'bullmq';

/** A job at the head of the wait list this long, while the worker has room for it, means it stopped taking jobs. */
export const STUCK_AFTER_MS = 10_000;
/** How often the wait list's head is looked at. */
const CHECK_EVERY_MS = 2_000;
/** A stuck worker's close is not waited for longer than this before its connections are dropped. */
const CLOSE_STUCK_WITHIN_MS = 5_000;

/** What a supervised worker needs from the one who starts it. */
export interface WorkerFactory {
  /** A new BullMQ worker running `processor`, its connections open. */
  create(processor: Processor): Promise<Worker>;
  /** Stops a worker that stopped taking jobs: it holds none, so nothing is waited for. */
  discard(worker: Worker): Promise<void>;
}

export interface SupervisionOptions {
  /** The queue the worker consumes, whose wait list is watched. */
  queue: Queue;
  /** The worker's `concurrency`: with this many of its jobs running, a waiting job is no sign. */
  concurrency: number;
  /** Told each time the worker is replaced. */
  onReplaced: (message: string) => void;
  stuckAfterMs?: number;
  checkEveryMs?: number;
}

/**
 * A BullMQ worker that is replaced by a fresh one when it stops taking jobs. BullMQ waits for jobs with a
 * blocking command on a connection of its own; across a Redis Cluster failover under a partition (a master
 * cut off, its replica promoted, the old master demoted when the link heals) that wait can be lost without
 * an error, and the worker then waits for ever while jobs wait too. BullMQ's maintainers advise closing such
 * a worker and creating another. What is watched is the symptom, whatever its cause: the same job at the
 * head of the queue's wait list for `stuckAfterMs` while this worker runs fewer jobs than its concurrency —
 * a worker with room takes a waiting job within milliseconds, so with any healthy worker the job would be
 * gone. Every worker of the queue that is stuck replaces itself; a busy one does nothing.
 */
export class SupervisedWorker {
  private current!: Worker;
  private running = 0;
  private head: { id: string; since: number } | undefined;
  private readonly listeners: ((worker: Worker) => void)[] = [];
  private readonly timer: NodeJS.Timeout;
  private checking = false;
  private closed = false;
  /** How many times the worker was replaced. */
  replacements = 0;

  private constructor(
    private readonly factory: WorkerFactory,
    private readonly processor: Processor,
    private readonly options: SupervisionOptions,
  ) {
    this.timer = setInterval(() => void this.check(), options.checkEveryMs ?? CHECK_EVERY_MS);
    this.timer.unref();
  }

  static async start(
    factory: WorkerFactory,
    processor: Processor,
    options: SupervisionOptions,
  ): Promise<SupervisedWorker> {
    const supervised = new SupervisedWorker(factory, processor, options);
    try {
      supervised.current = await factory.create(supervised.counted());
    } catch (error) {
      clearInterval(supervised.timer);
      throw error;
    }
    return supervised;
  }

  /** The BullMQ worker running now. */
  get worker(): Worker {
    return this.current;
  }

  /** Listens on the worker running now and on each one that replaces it. */
  on<E extends keyof WorkerListener>(event: E, listener: WorkerListener[E]): void {
    const attach = (worker: Worker) => void worker.on(event, listener);
    this.listeners.push(attach);
    attach(this.current);
  }

  /** Stops watching; the caller closes `worker` (QueueWorkers.close). */
  stopWatching(): void {
    this.closed = true;
    clearInterval(this.timer);
  }

  /** The processor, counting the jobs it runs (the worker's room). */
  private counted(): Processor {
    return async (job: Job, token?: string, signal?: AbortSignal) => {
      this.running += 1;
      try {
        return await this.processor(job, token, signal);
      } finally {
        this.running -= 1;
      }
    };
  }

  private async check(): Promise<void> {
    if (this.checking || this.closed) return;
    this.checking = true;
    try {
      const [oldest] = await this.options.queue.getJobs(['wait'], 0, 0, true);
      const now = Date.now();
      if (!oldest?.id || this.running >= this.options.concurrency) {
        this.head = undefined;
        return;
      }
      if (this.head?.id !== oldest.id) {
        this.head = { id: oldest.id, since: now };
        return;
      }
      const waitedMs = now - this.head.since;
      if (waitedMs < (this.options.stuckAfterMs ?? STUCK_AFTER_MS)) return;
      this.head = undefined;
      await this.replace(oldest.id, waitedMs);
    } catch {
      // Redis unreachable: nothing can be taken anyway; the next look decides.
    } finally {
      this.checking = false;
    }
  }

  private async replace(jobId: string, waitedMs: number): Promise<void> {
    const stuck = this.current;
    this.options.onReplaced(
      `Worker of ${this.options.queue.name} took no job while job ${jobId} waited ${Math.round(waitedMs / 1000)} s with room for it (${this.running}/${this.options.concurrency} running): replacing it`,
    );
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.factory.discard(stuck).catch(() => undefined),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_STUCK_WITHIN_MS))),
    ]).finally(() => clearTimeout(timer));
    if (this.closed) return;
    this.current = await this.factory.create(this.counted());
    for (const attach of this.listeners) attach(this.current);
    this.replacements += 1;
  }
}
