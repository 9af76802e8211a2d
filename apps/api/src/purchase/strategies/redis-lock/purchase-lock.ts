import { type AppConfig, InjectAppConfig } from '@flash-sale/config';
import { StrategyPurchaseRepository } from '@flash-sale/db';
import { ErrorCode, RetryLaterError } from '@flash-sale/domain';
import { type HeldLock, type LockTiming, SaleLocks } from '@flash-sale/redis';
import { Injectable } from '@nestjs/common';
import { E_TIMEOUT, Mutex, withTimeout } from 'async-mutex';

/** Between two attempts at a held lock, waiters sleep a random pause in this range so they spread apart. */
const RETRY_DELAY_MS = { min: 5, max: 25 } as const;
const RETRY_SECONDS = 1;

/** A grant of the sale's Redis lock, as the purchase holding it sees it. */
export interface LockGrant {
  lock: HeldLock;
  /**
   * Lets this instance's next buyer of the sale go for the Redis lock now, as if this holder were on
   * another instance (the demonstration's paused holder: a paused process queues nobody behind it).
   */
  leaveLocalQueue(): void;
}

/** `503` + `retry-after`: nothing was sold, and the same submit token gets its true answer shortly. */
function lockNotHeld(message: string): RetryLaterError {
  return new RetryLaterError(ErrorCode.Unavailable, message, RETRY_SECONDS);
}

/**
 * The redis-lock strategies' per-sale lock around a purchase (docs/architecture.md "Strategies"): a
 * bounded, jittered wait for the lock (503 + retry-after when it cannot be had), then — with fencing —
 * the grant's token claimed on the sale's row before the work reads anything, and the lock released by
 * its owner only, whatever the work did.
 *
 * Buyers of one sale on this instance first queue here, in arrival order, so that only one of them at
 * a time polls Redis for the lock: hundreds of waiters each polling SET NX would spend the CPU the
 * holder needs. Across instances the Redis lock decides; the wait bound covers both queues.
 */
@Injectable()
export class PurchaseLock {
  private readonly timing: LockTiming;
  /**
   * Per sale, a token MySQL has seen, learnt when a claim was refused: the next grant starts above it,
   * which heals a fence counter Redis lost (a restart without its data).
   */
  private readonly fenceFloors = new Map<string, number>();
  /** Per sale, this instance's queue for its turn at the Redis lock (while anyone is in it). */
  private readonly localQueues = new Map<string, Mutex>();

  constructor(
    private readonly locks: SaleLocks,
    private readonly repository: StrategyPurchaseRepository,
    @InjectAppConfig() config: AppConfig,
  ) {
    this.timing = {
      ttlMs: config.purchase.lockTtlMs,
      waitMs: config.purchase.lockWaitMs,
      retryDelayMs: RETRY_DELAY_MS,
    };
  }

  async holding<T>(saleId: string, fenced: boolean, work: (grant: LockGrant) => Promise<T>): Promise<T> {
    const queue = this.localQueues.get(saleId) ?? new Mutex();
    this.localQueues.set(saleId, queue);
    const giveUpAt = Date.now() + this.timing.waitMs;
    let leave: () => void;
    try {
      const release = await withTimeout(queue, this.timing.waitMs).acquire();
      let left = false;
      leave = () => {
        if (!left) release();
        left = true;
      };
    } catch (error) {
      if (error === E_TIMEOUT) throw tooManyWaiting();
      throw error;
    }
    try {
      return await this.holdingInRedis(saleId, fenced, giveUpAt, (lock) => work({ lock, leaveLocalQueue: leave }));
    } finally {
      leave();
      if (!queue.isLocked()) this.localQueues.delete(saleId);
    }
  }

  private async holdingInRedis<T>(
    saleId: string,
    fenced: boolean,
    giveUpAt: number,
    work: (lock: HeldLock) => Promise<T>,
  ): Promise<T> {
    const timing = { ...this.timing, waitMs: Math.max(0, giveUpAt - Date.now()) };
    const lock = await this.locks.acquire(saleId, timing, this.fenceFloors.get(saleId) ?? 0);
    if (!lock) throw tooManyWaiting();
    try {
      if (fenced && !(await this.repository.claimFence(saleId, lock.token))) {
        this.fenceFloors.set(saleId, await this.repository.fenceOf(saleId));
        throw lockLost();
      }
      return await work(lock);
    } finally {
      // False when the lock expired meanwhile (and may be another's now): nothing to undo either way.
      await lock.release().catch(() => false);
    }
  }
}

function tooManyWaiting(): RetryLaterError {
  return lockNotHeld('Too many buyers are waiting for this sale; retry with the same token');
}

/** A newer holder has the sale's row: this one's lock ran out before it could write. */
export function lockLost(): RetryLaterError {
  return lockNotHeld('The purchase lock ran out before the purchase was written; retry with the same token');
}
