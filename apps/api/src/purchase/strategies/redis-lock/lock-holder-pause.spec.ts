import type { HeldLock, SaleLocks } from '@flash-sale/redis';
import { LockHolderPause } from './lock-holder-pause';
import type { LockGrant } from './purchase-lock';

/** A grant of a sale's lock whose watchdog and local queue record what the pause did to them. */
function grant(pauseArmed: boolean, ttlMs = 2_000) {
  const seen = { watchdogStopped: false, leftQueue: false };
  const lock = { saleId: '7', ttlMs, pauseArmed, stopWatchdog: () => (seen.watchdogStopped = true) };
  const value: LockGrant = { lock: lock as unknown as HeldLock, leaveLocalQueue: () => (seen.leftQueue = true) };
  return { value, seen };
}

/**
 * What the paused holder does once its grant took the armed pause (arming and taking it are Redis's:
 * test/purchase/redis-lock.int.spec.ts).
 */
describe('LockHolderPause: the demonstration’s paused lock holder', () => {
  const pause = new LockHolderPause({} as SaleLocks);

  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('a grant that took the pause stops past the TTL, its watchdog stopped, out of its instance’s queue', async () => {
    const paused = grant(true);
    let resumed = false;
    const pausing = pause.pauseIfArmed(paused.value).then(() => (resumed = true));
    await jest.advanceTimersByTimeAsync(2_999);
    expect(resumed).toBe(false);
    expect(paused.seen).toEqual({ watchdogStopped: true, leftQueue: true });
    await jest.advanceTimersByTimeAsync(1);
    await pausing;
    expect(resumed).toBe(true);
  });

  it('any other grant goes on at once, its watchdog and its queue untouched', async () => {
    const other = grant(false);
    await pause.pauseIfArmed(other.value);
    expect(other.seen).toEqual({ watchdogStopped: false, leftQueue: false });
  });
});
