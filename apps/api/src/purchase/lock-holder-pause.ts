import { Injectable } from '@nestjs/common';
import type { LockGrant } from './purchase-lock';

/** How far past the lock's TTL the paused holder sleeps: its grant has surely gone to another by then. */
const PAST_TTL_MS = 1_000;

/**
 * The demonstration's fault (a Jepsen-style nemesis): the next holder of an armed sale's lock stops,
 * between reading the stock and writing it, for longer than the lock's TTL — what a GC pause, a stopped
 * process or a slow network does. Its watchdog stops too (a paused process runs no timers), so the lock
 * expires and the next buyer is granted it while the paused one still means to write. The paused holder
 * also steps out of this instance's queue for the lock: it stands for a holder on another instance.
 * Armed only by an admin — the demonstration, or `POST /api/admin/sales/:id/pause-lock-holder` for a
 * test sale — for one purchase of one sale on this instance; never otherwise.
 */
@Injectable()
export class LockHolderPause {
  /** Armed sales, each with the instant (epoch ms) past which its unused pause is dropped. */
  private readonly armed = new Map<string, number>();

  arm(saleId: string, untilMs = Number.POSITIVE_INFINITY): void {
    this.armed.set(saleId, untilMs);
  }

  disarm(saleId: string): void {
    this.armed.delete(saleId);
  }

  /** Pauses this holder if its sale is armed (once), then returns. */
  async pauseIfArmed({ lock, leaveLocalQueue }: LockGrant): Promise<void> {
    const until = this.armed.get(lock.saleId);
    if (until === undefined) return;
    this.armed.delete(lock.saleId);
    if (Date.now() > until) return;
    lock.stopWatchdog();
    leaveLocalQueue();
    await new Promise((resolve) => setTimeout(resolve, lock.ttlMs + PAST_TTL_MS));
  }
}
