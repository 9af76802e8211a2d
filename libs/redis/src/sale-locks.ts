import { randomUUID } from 'node:crypto';
import { defineScripts, type ScriptedClient } from './lua-source';
import type { RedisClient } from './redis-client';
import type { KeyBuilder } from './sale-keys';

const SCRIPTS = {
  fsLockAcquire: { file: 'lock-acquire-3.lua', numberOfKeys: 3 },
  fsLockRenew: { file: 'lock-renew-1.lua', numberOfKeys: 1 },
  fsLockRelease: { file: 'lock-release-1.lua', numberOfKeys: 1 },
} as const;

export interface LockTiming {
  /** How long a grant lives unless its holder renews it. */
  ttlMs: number;
  /** How long `acquire` keeps trying before it gives up. */
  waitMs: number;
  /** The pause between two attempts is drawn uniformly from this range (jitter: waiters spread apart). */
  retryDelayMs: { min: number; max: number };
}

/**
 * The redis-lock strategies' per-sale lock: SET NX PX with a random owner value, a fencing token minted
 * with every grant, renewal by its holder while it works (a watchdog), release only by its owner. The
 * scripts are `lock-*.lua`; this class is their only caller.
 *
 * The lock alone cannot keep two holders apart: a holder paused longer than the TTL (a GC pause, a
 * stopped process, a slow network) keeps working after its grant went to another. Only the store it
 * writes can tell them apart, by the token (docs/architecture.md "Strategies"). Maintained Node lock
 * libraries (redlock and its forks) mint no fencing token, hence this small class.
 */
export class SaleLocks {
  private readonly scripted: ScriptedClient<keyof typeof SCRIPTS>;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: KeyBuilder,
  ) {
    this.scripted = defineScripts(redis, SCRIPTS);
  }

  /**
   * Takes the sale's lock, trying again after a jittered pause until `timing.waitMs` has passed;
   * undefined when it could not be had in time. `fenceFloor`: a token MySQL has seen (see
   * lock-acquire-3.lua). The grant's watchdog runs until `release`.
   */
  async acquire(saleId: string, timing: LockTiming, fenceFloor = 0): Promise<HeldLock | undefined> {
    const giveUpAt = Date.now() + timing.waitMs;
    for (;;) {
      const lock = await this.tryAcquire(saleId, timing.ttlMs, fenceFloor);
      if (lock) return lock;
      const { min, max } = timing.retryDelayMs;
      const delay = min + Math.random() * (max - min);
      if (Date.now() + delay > giveUpAt) return undefined;
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }

  /** One attempt: the lock with its fencing token and a running watchdog, or undefined if it is held. */
  async tryAcquire(saleId: string, ttlMs: number, fenceFloor = 0): Promise<HeldLock | undefined> {
    const keys = this.keys.sale(saleId);
    const owner = randomUUID();
    const granted = await this.scripted.fsLockAcquire(
      keys.lock,
      keys.lockFence,
      keys.lockPause,
      owner,
      ttlMs,
      fenceFloor,
    );
    if (!Array.isArray(granted)) return undefined;
    const lock = new HeldLock(
      saleId,
      owner,
      Number(granted[0]),
      ttlMs,
      async () => Number(await this.scripted.fsLockRenew(keys.lock, owner, ttlMs)) === 1,
      async () => Number(await this.scripted.fsLockRelease(keys.lock, owner)) === 1,
      Number(granted[1]) === 1,
    );
    lock.startWatchdog();
    return lock;
  }

  /**
   * The demonstration's fault: the sale's next grant, on whichever API instance, is told to pause
   * (`HeldLock.pauseArmed`; apps/api purchase/strategies/redis-lock/lock-holder-pause.ts). Dropped unused after `forMs`.
   */
  async armPause(saleId: string, forMs: number): Promise<void> {
    await this.redis.set(this.keys.sale(saleId).lockPause, '1', 'PX', Math.max(1, Math.round(forMs)));
  }

  /** Drops an armed pause no grant took. */
  async disarmPause(saleId: string): Promise<void> {
    await this.redis.del(this.keys.sale(saleId).lockPause);
  }
}

/** One grant of a sale's lock. */
export class HeldLock {
  private watchdog: NodeJS.Timeout | undefined;
  private lostIt = false;

  constructor(
    readonly saleId: string,
    /** The random value that proves this grant's ownership to the renewal and release scripts. */
    readonly owner: string,
    /** The fencing token: larger than every earlier grant's. */
    readonly token: number,
    readonly ttlMs: number,
    private readonly renewInRedis: () => Promise<boolean>,
    private readonly releaseInRedis: () => Promise<boolean>,
    /** This grant took the pause an admin armed for the sale (SaleLocks.armPause): its holder is to stop. */
    readonly pauseArmed = false,
  ) {}

  /** Whether a renewal found the lock gone or taken: this holder no longer has it (it may not know sooner). */
  get lost(): boolean {
    return this.lostIt;
  }

  /**
   * Renews the grant every third of its TTL while the holder works, as Redisson's watchdog does: a
   * long purchase keeps its lock, a dead holder's lock expires within one TTL.
   */
  startWatchdog(): void {
    this.watchdog = setInterval(() => void this.renew(), Math.max(1, Math.floor(this.ttlMs / 3)));
    this.watchdog.unref();
  }

  /**
   * Stops renewing without releasing: what a stop-the-world pause does to a holder (its timers do not
   * run). The demonstration's paused holder uses it; `release` uses it too.
   */
  stopWatchdog(): void {
    clearInterval(this.watchdog);
    this.watchdog = undefined;
  }

  /** Extends the grant by one TTL if it is still this owner's; false (and `lost`) if not. */
  async renew(): Promise<boolean> {
    if (this.lostIt) return false;
    try {
      const renewed = await this.renewInRedis();
      if (!renewed) {
        this.lostIt = true;
        this.stopWatchdog();
      }
      return renewed;
    } catch {
      // Redis unreachable for a moment: the next tick tries again; if the TTL runs out first, the lock
      // is lost, which the fencing token makes harmless.
      return false;
    }
  }

  /** Deletes the lock if it is still this owner's; false when it had expired or was another's by then. */
  async release(): Promise<boolean> {
    this.stopWatchdog();
    return this.releaseInRedis();
  }
}
