import { type AppConfig, InjectAppConfig } from '@flash-sale/config';
import { StrategyPurchaseRepository } from '@flash-sale/db';
import { ErrorCode, RetryLaterError } from '@flash-sale/domain';
import { type HeldLock, type LockTiming, SaleLocks } from '@flash-sale/redis';
import { Injectable } from '@nestjs/common';

/** Between two attempts at a held lock, waiters sleep a random pause in this range so they spread apart. */
const RETRY_DELAY_MS = { min: 5, max: 25 } as const;
const RETRY_SECONDS = 1;

/** `503` + `retry-after`: nothing was sold, and the same submit token gets its true answer shortly. */
export function lockNotHeld(message: string): RetryLaterError {
  return new RetryLaterError(ErrorCode.Unavailable, message, RETRY_SECONDS);
}

/**
 * The redis-lock strategies' per-sale lock around a purchase (docs/architecture.md "Strategies"): a
 * bounded, jittered wait for the lock (503 + retry-after when it cannot be had), then — with fencing —
 * the grant's token claimed on the sale's row before the work reads anything, and the lock released by
 * its owner only, whatever the work did.
 */
@Injectable()
export class PurchaseLock {
  private readonly timing: LockTiming;
  /**
   * Per sale, a token MySQL has seen, learnt when a claim was refused: the next grant starts above it,
   * which heals a fence counter Redis lost (a restart without its data).
   */
  private readonly fenceFloors = new Map<string, number>();

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

  async holding<T>(saleId: string, fenced: boolean, work: (lock: HeldLock) => Promise<T>): Promise<T> {
    const lock = await this.locks.acquire(saleId, this.timing, this.fenceFloors.get(saleId) ?? 0);
    if (!lock) throw lockNotHeld('Too many buyers are waiting for this sale; retry with the same token');
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

/** A newer holder has the sale's row: this one's lock ran out before it could write. */
export function lockLost(): RetryLaterError {
  return lockNotHeld('The purchase lock ran out before the purchase was written; retry with the same token');
}
