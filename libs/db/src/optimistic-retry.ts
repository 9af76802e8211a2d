import { mysqlErrorKind } from './mysql-errors';

/** Thrown inside a transaction when a version-guarded update matched no row: roll back and try again. */
export class OptimisticConflict extends Error {
  override name = 'OptimisticConflict';
}

export class OptimisticLockExhaustedError extends Error {
  override name = 'OptimisticLockExhaustedError';
}

/**
 * Runs `attempt` (one whole transaction) until it stops hitting optimistic-lock conflicts or
 * deadlocks, at most `retries` times, sleeping a full-jitter backoff in between so that competing
 * writers spread apart instead of colliding again.
 */
export async function withOptimisticRetries<T>(attempt: () => Promise<T>, options: { retries: number }): Promise<T> {
  for (let tries = 1; ; tries++) {
    try {
      return await attempt();
    } catch (error) {
      if (!(error instanceof OptimisticConflict) && mysqlErrorKind(error) !== 'transaction-conflict') throw error;
      if (tries >= options.retries) {
        throw new OptimisticLockExhaustedError(`Gave up after ${tries} optimistic-lock conflicts or deadlocks`);
      }
      await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(100, 2 ** tries)));
    }
  }
}
