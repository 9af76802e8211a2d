import { renameSync, rmSync } from 'node:fs';
import { withDeadline as deadline } from '../../apps/api/src/common/deadline';

/**
 * A failure of the explorer's own machinery — a folder it cannot remove, a process it cannot start, a
 * bug in its code — as opposed to a violation, which the checker finds in what the product answered
 * or holds. A run that meets one is not judged: the error is reported apart ("explorer errors N" in the
 * summary), the processes are brought back, and the next run starts. Violations are never thrown;
 * anything else thrown out of a run is the explorer's, and is wrapped in this type at the run's edge.
 */
export class ExplorerError extends Error {
  constructor(message: string, cause?: unknown) {
    super(cause === undefined ? message : `${message}: ${describeCause(cause)}`, { cause });
    this.name = 'ExplorerError';
  }

  /** `error` as an ExplorerError: itself, or wrapped with what the explorer was doing (`doing`). */
  static wrap(error: unknown, doing: string): ExplorerError {
    return error instanceof ExplorerError ? error : new ExplorerError(doing, error);
  }
}

function describeCause(cause: unknown): string {
  if (cause instanceof Error) return `${cause.name}: ${cause.message}`;
  return String(cause);
}

/**
 * Removes a folder a process wrote in (a Redis' data directory). A process that was just killed may
 * still have a file open in it for a moment (`ENOTEMPTY`, `EBUSY`): retried, then moved aside to be
 * removed with the working directory; only a folder that can be neither removed nor moved is an
 * ExplorerError.
 */
export function removeFolder(dir: string): void {
  try {
    rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
  } catch (error) {
    try {
      renameSync(dir, `${dir}.stale-${Date.now()}`);
    } catch {
      throw new ExplorerError(`cannot remove ${dir}`, error);
    }
  }
}

/** The watchdog's error: the work it watched may still be running. */
export class DeadlinePassed extends ExplorerError {}

/**
 * `work`, or a DeadlinePassed once `ms` have passed without it settling (the API's `withDeadline`). The
 * explorer's watchdog: a run or a recovery that hangs (a process that never answers, a socket nobody
 * closes) ends the exploration with an explorer error instead of holding it until the budget's owner gives
 * up. The work itself is not cancelled; the caller stops the cluster, which ends it.
 */
export function withDeadline<T>(work: Promise<T>, ms: number, doing: string): Promise<T> {
  return deadline(work, ms, doing, () => new DeadlinePassed(`${doing} did not finish in ${Math.round(ms / 1000)} s`));
}

/**
 * What the run is doing now (a command of its schedule, or a phase around them) and since when: what the
 * watchdog names when a run hangs, so the step that never finished is known without replaying it.
 */
export const currentStep = { step: 'starting', since: Date.now() };

export function stepTo(step: string): void {
  currentStep.step = step;
  currentStep.since = Date.now();
}
