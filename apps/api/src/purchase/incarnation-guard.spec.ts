import type { StockLeases, VerifyOutcome } from '@flash-sale/db';
import type { RedisConnection } from '@flash-sale/redis';
import { IncarnationGuard } from './incarnation-guard';

/** A connection whose readiness the test drives, and leases that count verifications. */
function fakes(readyAtStart: boolean) {
  const listeners: (() => void)[] = [];
  const connection = {
    isReady: readyAtStart,
    onReady: (listener: () => void) => void listeners.push(listener),
  } as unknown as RedisConnection;
  const verified: string[] = [];
  let finish: (outcome: VerifyOutcome) => void = () => undefined;
  const leases = {
    verifyIncarnation: (saleId: string) => {
      verified.push(saleId);
      return new Promise<VerifyOutcome>((resolve) => (finish = resolve));
    },
  } as unknown as StockLeases;
  const guard = new IncarnationGuard(connection, leases);
  guard.onModuleInit();
  return { guard, verified, ready: () => listeners.forEach((listener) => listener()), finish: () => finish('current') };
}

describe('IncarnationGuard', () => {
  it('asks for nothing on the first connection, whether it is up at boot or comes a moment later', () => {
    const upAtBoot = fakes(true);
    expect(upAtBoot.guard.mustVerify('1')).toBe(false);
    const upLater = fakes(false);
    upLater.ready();
    expect(upLater.guard.mustVerify('1')).toBe(false);
  });

  it('after a reconnect, asks to verify each sale once, sharing a verification already running', async () => {
    const { guard, verified, ready, finish } = fakes(true);
    ready(); // Redis came back: it may have lost or rolled back any sale's state
    expect(guard.mustVerify('1')).toBe(true);
    const first = guard.verify('1');
    const second = guard.verify('1');
    expect(verified).toEqual(['1']);
    finish();
    await Promise.all([first, second]);
    expect(guard.mustVerify('1')).toBe(false);
    expect(guard.mustVerify('2')).toBe(true);
    ready(); // another reconnect: every sale again
    expect(guard.mustVerify('1')).toBe(true);
  });
});
