import type { StockLeases, VerifyOutcome } from '@flash-sale/stock';
import { EventEmitter } from 'node:events';
import { type RedisClient, RedisConnection } from '@flash-sale/redis';
import { IncarnationGuard } from './incarnation-guard';

/**
 * A real RedisConnection over a client whose drops and reconnections the test drives, and leases that
 * count verifications.
 */
function fakes(readyAtStart: boolean) {
  const client = Object.assign(new EventEmitter(), { status: readyAtStart ? 'ready' : 'connecting' });
  const connection = new RedisConnection(client as unknown as RedisClient);
  const verified: string[] = [];
  const pending: ((outcome: VerifyOutcome) => void)[] = [];
  const leases = {
    verifyIncarnation: (saleId: string) => {
      verified.push(saleId);
      return new Promise<VerifyOutcome>((resolve) => pending.push(resolve));
    },
  } as unknown as StockLeases;
  const guard = new IncarnationGuard(connection, leases);
  guard.onModuleInit();
  return {
    guard,
    verified,
    ready: () => {
      client.status = 'ready';
      client.emit('ready');
    },
    drop: () => {
      client.status = 'reconnecting';
      client.emit('close');
    },
    finish: () => pending.shift()?.('current'),
  };
}

describe('IncarnationGuard', () => {
  it('asks for nothing on the first connection, whether it is up at boot or comes a moment later', () => {
    const upAtBoot = fakes(true);
    expect(upAtBoot.guard.mustVerify('1')).toBe(false);
    const upLater = fakes(false);
    upLater.drop(); // a failed first attempt is no lost state
    upLater.ready();
    expect(upLater.guard.mustVerify('1')).toBe(false);
  });

  it('from the moment the connection drops, asks to verify each sale once, sharing a running verification', async () => {
    const { guard, verified, ready, drop, finish } = fakes(true);
    drop(); // commands queued from now on reach whatever Redis answers next
    expect(guard.mustVerify('1')).toBe(true);
    ready();
    const first = guard.verify('1');
    const second = guard.verify('1');
    expect(verified).toEqual(['1']);
    finish();
    await Promise.all([first, second]);
    expect(guard.mustVerify('1')).toBe(false);
    expect(guard.mustVerify('2')).toBe(true);
    drop(); // another outage: every sale again
    expect(guard.mustVerify('1')).toBe(true);
  });

  it('does not count a verification that was running when the connection dropped again', async () => {
    const { guard, drop, ready, finish } = fakes(true);
    drop();
    ready();
    const before = guard.verify('1');
    drop(); // the Redis it verified is gone; the next one may have lost the sale
    finish();
    await before;
    expect(guard.mustVerify('1')).toBe(true);
  });
});
