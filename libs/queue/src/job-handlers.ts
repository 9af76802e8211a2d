import type { Job, Processor } from 'bullmq';
import type { QueueName } from './queue-names';

/**
 * A consumer's handler for each job name its queue carries. Keyed by the queue's job-name union, so a
 * job without a handler, or a handler for a job the queue does not carry, does not compile.
 */
export type JobHandlers<JobName extends string> = Record<JobName, (job: Job) => Promise<unknown>>;

/** The BullMQ processor that runs each job by its name's handler; a job of another name fails. */
export function processorOf<JobName extends string>(queue: QueueName, handlers: JobHandlers<JobName>): Processor {
  const byName: Partial<Record<string, (job: Job) => Promise<unknown>>> = handlers;
  return async (job) => {
    const handler = Object.hasOwn(byName, job.name) ? byName[job.name] : undefined;
    if (!handler) throw new Error(`No handler for job "${job.name}" on ${queue}`);
    return handler(job);
  };
}
