import { Injectable } from '@nestjs/common';
import type { LockGrant } from './purchase-lock';

/** How far past the lock's TTL the paused holder sleeps: its grant has surely gone to another by then. */
const PAST_TTL_MS = 1_000;

/**
 * The demonstration's fault (a Jepsen-style nemesis): the next holder of an armed sale's lock stops,
 * between reading the stock and writing it, for longer than the lock's TTL — what a GC pause, a stopped
 * process or a slow network does. Its watchdog stops too (a paused process runs no timers), so the lock
 * expires and the next buyer is granted it while the paused one still means to write. The demonstration
 * sends every buyer to this one instance, so the paused holder also steps out of the instance's queue
 * for the lock: it stands for a holder on another instance. Armed only by an admin's demonstration, for
 * one purchase of one sale; never otherwise.
 */
@Injectable()
export class LockHolderPause {
  private readonly armed = new Set<string>();

  arm(saleId: string): void {
    this.armed.add(saleId);
  }

  disarm(saleId: string): void {
    this.armed.delete(saleId);
  }

  /** Pauses this holder if its sale is armed (once), then returns. */
  async pauseIfArmed({ lock, leaveLocalQueue }: LockGrant): Promise<void> {
    if (!this.armed.delete(lock.saleId)) return;
    lock.stopWatchdog();
    leaveLocalQueue();
    await new Promise((resolve) => setTimeout(resolve, lock.ttlMs + PAST_TTL_MS));
  }
}
