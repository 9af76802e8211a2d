import { SaleLocks } from '@flash-sale/redis';
import { Injectable } from '@nestjs/common';
import type { LockHolderPauses } from '../../stock-strategy';
import type { LockGrant } from './purchase-lock';

/** How far past the lock's TTL the paused holder sleeps: its grant has surely gone to another by then. */
const PAST_TTL_MS = 1_000;

/**
 * The demonstration's fault (a Jepsen-style nemesis): the next holder of an armed sale's lock stops,
 * between reading the stock and writing it, for longer than the lock's TTL — what a GC pause, a stopped
 * process or a slow network does. Its watchdog stops too (a paused process runs no timers), so the lock
 * expires and the next buyer is granted it while the paused one still means to write. The paused holder
 * also steps out of its instance's queue for the lock: it stands for a holder on another instance.
 *
 * Armed in Redis beside the sale's lock, and taken by the grant itself (lock-acquire-3.lua): exactly one
 * grant pauses, on whichever API instance it happens — the sale's first buyer after the arming, while
 * units remain — however the buyers are spread over the instances. Armed only by an admin (the
 * demonstration, or `POST /api/admin/sales/:id/pause-lock-holder` for a test sale); never otherwise.
 */
@Injectable()
export class LockHolderPause implements LockHolderPauses {
  constructor(private readonly locks: SaleLocks) {}

  /** The sale's next lock grant pauses; an unused arming is dropped after `forMs`. */
  arm(saleId: string, forMs: number): Promise<void> {
    return this.locks.armPause(saleId, forMs);
  }

  disarm(saleId: string): Promise<void> {
    return this.locks.disarmPause(saleId);
  }

  /** Pauses this holder if its grant took the sale's armed pause, then returns. */
  async pauseIfArmed({ lock, leaveLocalQueue }: LockGrant): Promise<void> {
    if (!lock.pauseArmed) return;
    lock.stopWatchdog();
    leaveLocalQueue();
    await new Promise((resolve) => setTimeout(resolve, lock.ttlMs + PAST_TTL_MS));
  }
}
