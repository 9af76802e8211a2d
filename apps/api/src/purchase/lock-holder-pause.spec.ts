import type { HeldLock } from '@flash-sale/redis';
import { LockHolderPause } from './lock-holder-pause';
import type { LockGrant } from './purchase-lock';

/** A grant of a sale's lock whose watchdog and local queue record what the pause did to them. */
function grant(saleId: string, ttlMs = 2_000) {
  const seen = { watchdogStopped: false, leftQueue: false };
  const lock = { saleId, ttlMs, stopWatchdog: () => (seen.watchdogStopped = true) } as unknown as HeldLock;
  const value: LockGrant = { lock, leaveLocalQueue: () => (seen.leftQueue = true) };
  return { value, seen };
}

describe('LockHolderPause: the demonstration’s paused lock holder', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('pauses the next holder of an armed sale past the TTL, its watchdog stopped, out of the queue; once', async () => {
    const pause = new LockHolderPause();
    pause.arm('7', Date.now() + 60_000);
    const first = grant('7');
    let resumed = false;
    const paused = pause.pauseIfArmed(first.value).then(() => (resumed = true));
    await jest.advanceTimersByTimeAsync(2_999);
    expect(resumed).toBe(false);
    expect(first.seen).toEqual({ watchdogStopped: true, leftQueue: true });
    await jest.advanceTimersByTimeAsync(1);
    await paused;
    expect(resumed).toBe(true);

    const next = grant('7');
    await pause.pauseIfArmed(next.value); // disarmed by the first: returns at once
    expect(next.seen).toEqual({ watchdogStopped: false, leftQueue: false });
  });

  it('never pauses another sale, and drops an armed pause no holder took before its time ran out', async () => {
    const pause = new LockHolderPause();
    pause.arm('7', Date.now() + 1_000);
    const other = grant('8');
    await pause.pauseIfArmed(other.value);
    expect(other.seen.watchdogStopped).toBe(false);

    jest.setSystemTime(Date.now() + 1_001);
    const late = grant('7');
    await pause.pauseIfArmed(late.value);
    expect(late.seen).toEqual({ watchdogStopped: false, leftQueue: false });
  });
});
