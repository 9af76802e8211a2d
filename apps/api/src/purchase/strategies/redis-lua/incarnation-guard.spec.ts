import type { StockLeases, VerifyOutcome } from '@flash-sale/stock';
import { EventEmitter } from 'node:events';
import { Cluster } from 'ioredis';
import { type RedisClient, RedisConnection } from '@flash-sale/redis';
import { IncarnationGuard } from './incarnation-guard';

/**
 * A real RedisConnection over a client whose drops and reconnections the test drives, and leases that
 * count verifications.
 */
function fakes(readyAtStart: boolean, kind: 'redis' | 'cluster' = 'redis') {
  const client = Object.assign(new EventEmitter(), {
    status: readyAtStart ? 'ready' : 'connecting',
    // A cluster client's slot map (slot → [master, replicas]) and the read RedisConnection asks of it.
    slots: [['127.0.0.1:7000']],
    refreshSlotsCache: () => undefined,
  });
  // A cluster client for RedisConnection, whose events the test drives (no node is ever reached).
  if (kind === 'cluster') Object.setPrototypeOf(client, Cluster.prototype);
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
    /** A cluster master's connection ends, then the slot map names its promoted replica. */
    failOver: (promoted: string) => {
      client.emit('-node', { options: { readOnly: false } });
      client.slots = [[promoted]];
      client.emit('refresh');
    },
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

  it("in a cluster, a master's failover (the client stays ready) asks again, and tokens issued before it may lack their purchase", async () => {
    const { guard, verified, failOver, finish } = fakes(true, 'cluster');
    const issuedBefore = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(guard.mustVerify('1')).toBe(false);
    failOver('127.0.0.1:7003');
    expect(guard.mustVerify('1')).toBe(true);
    const verifying = guard.verify('1');
    expect(verified).toEqual(['1']);
    finish();
    await verifying;
    expect(guard.mustVerify('1')).toBe(false);
    // The promoted replica is the current copy from the failover on: only an older token can have
    // bought in the copy that died.
    expect(guard.mayLackPurchaseOf(issuedBefore)).toBe(true);
    expect(guard.mayLackPurchaseOf(Date.now() + 60_000)).toBe(false);
  });
});
