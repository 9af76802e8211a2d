import type { AppConfig } from '@flash-sale/config';
import { ErrorCode } from '@flash-sale/domain';
import type { ReplicaAcks, WrittenTo } from '@flash-sale/redis';
import { DurableAck } from './durable-ack';

const configOf = (durableAck: 'replica' | 'auto') =>
  ({ purchase: { durableAck, durableAckTimeoutMs: 50 } }) as AppConfig;
const bucketOn = (saleId: string): WrittenTo => ({ saleId, index: 0, count: 1 });
const roomOn = (saleId: string): WrittenTo => ({ roomOf: saleId });

/**
 * The durable acknowledgement's refusals, per master. The replicas are scripted (which masters' WAITs
 * confirm): what is checked is which purchases DurableAck lets through, not Redis's WAIT (libs/redis
 * replica-acks specs run that on real replicas).
 */
function world(mode: 'replica' | 'auto' = 'replica') {
  /** Sale id (or `room <id>`) → the master holding its bucket (or its room). */
  const masters = new Map([
    ['1', 'redis-a:6379'],
    ['2', 'redis-b:6379'],
    ['room 1', 'redis-b:6379'],
  ]);
  const masterOf = (writtenTo: WrittenTo) =>
    masters.get('roomOf' in writtenTo ? `room ${writtenTo.roomOf}` : writtenTo.saleId)!;
  const confirming = new Set(['redis-a:6379', 'redis-b:6379']);
  /** Masters with no replica attached at all. */
  const withoutReplica = new Set<string>();
  const waits: string[] = [];
  const replicaAcks = {
    nodeKeyOf: masterOf,
    confirm: async (_replicas: number, _timeoutMs: number, writtenTo: WrittenTo) => {
      const master = masterOf(writtenTo);
      waits.push(master);
      return confirming.has(master) ? 1 : 0;
    },
    replicasOf: async (writtenTo: WrittenTo) => (withoutReplica.has(masterOf(writtenTo)) ? 0 : 1),
  } as unknown as ReplicaAcks;
  const durableAck = new DurableAck(replicaAcks, configOf(mode));
  // As DURABLE_ACK=auto decides at startup when every master has a replica.
  durableAck.enabled = true;
  return { durableAck, confirming, withoutReplica, waits, masters };
}

const codeOf = (run: () => unknown) => {
  try {
    run();
    return 'admitted';
  } catch (error) {
    return (error as { code?: ErrorCode }).code;
  }
};

describe('DurableAck (DURABLE_ACK=replica)', () => {
  it("refuses only the purchases of the master whose replica missed a WAIT; another master's buyers go on", async () => {
    const { durableAck, confirming } = world();
    confirming.delete('redis-a:6379');
    await expect(durableAck.confirm(bucketOn('1'))).rejects.toMatchObject({ code: ErrorCode.Unavailable });
    expect(codeOf(() => durableAck.admit(() => bucketOn('1')))).toBe(ErrorCode.Unavailable);
    expect(codeOf(() => durableAck.admit(() => bucketOn('2')))).toBe('admitted');
    await expect(durableAck.confirm(bucketOn('2'))).resolves.toBeUndefined();
  });

  it('a write sent to a master the slot map no longer names is not confirmed, whoever holds the slot now', async () => {
    const { durableAck, waits, masters, withoutReplica } = world('auto');
    const writtenOn = durableAck.masterNow(bucketOn('1'));
    // A failover seen while the reservation was out: a promoted replica, with no replica of its own yet.
    masters.set('1', 'redis-a-promoted:6380');
    withoutReplica.add('redis-a-promoted:6380');
    await expect(durableAck.confirm(bucketOn('1'), writtenOn)).rejects.toMatchObject({ code: ErrorCode.Unavailable });
    expect(waits).toEqual([]);
    // The same token's replay is written on the master there is now: that one is confirmed as usual.
    await expect(durableAck.confirm(bucketOn('1'), durableAck.masterNow(bucketOn('1')))).resolves.toBeUndefined();
  });

  it("a room is refused with the master that holds it, not with its sale's bucket's", async () => {
    const { durableAck, confirming } = world();
    confirming.delete('redis-b:6379');
    await expect(durableAck.confirm(roomOn('1'))).rejects.toMatchObject({
      code: ErrorCode.Unavailable,
      message: expect.stringContaining('waiting room'),
    });
    expect(codeOf(() => durableAck.admit(() => roomOn('1')))).toBe(ErrorCode.Unavailable);
    expect(codeOf(() => durableAck.admit(() => bucketOn('2')))).toBe(ErrorCode.Unavailable);
    expect(codeOf(() => durableAck.admit(() => bucketOn('1')))).toBe('admitted');
  });

  it("admits that master's purchases again once a probe finds its replica back", async () => {
    const { durableAck, confirming, waits } = world();
    confirming.delete('redis-a:6379');
    await expect(durableAck.confirm(bucketOn('1'))).rejects.toThrow();
    confirming.add('redis-a:6379');
    // The refusal sends one probe of its own, and keeps refusing until it answers.
    expect(codeOf(() => durableAck.admit(() => bucketOn('1')))).toBe(ErrorCode.Unavailable);
    await new Promise((resolve) => setImmediate(resolve));
    expect(waits).toEqual(['redis-a:6379', 'redis-a:6379']);
    expect(codeOf(() => durableAck.admit(() => bucketOn('1')))).toBe('admitted');
  });

  it('refuses at once for a second at most: then a purchase waits for a replica itself, and tells again', async () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick'] });
    try {
      const { durableAck, confirming, waits } = world();
      confirming.delete('redis-a:6379');
      await expect(durableAck.confirm(bucketOn('1'))).rejects.toThrow();
      expect(codeOf(() => durableAck.admit(() => bucketOn('1')))).toBe(ErrorCode.Unavailable);
      await new Promise((resolve) => setImmediate(resolve)); // the probe: still missing
      jest.advanceTimersByTime(1_000);
      expect(codeOf(() => durableAck.admit(() => bucketOn('1')))).toBe('admitted');
      // That purchase's own WAIT finds the replica still missing: refused at once again.
      await expect(durableAck.confirm(bucketOn('1'))).rejects.toThrow();
      expect(codeOf(() => durableAck.admit(() => bucketOn('1')))).toBe(ErrorCode.Unavailable);
      expect(waits).toEqual(['redis-a:6379', 'redis-a:6379', 'redis-a:6379', 'redis-a:6379']);
    } finally {
      jest.useRealTimers();
    }
  });

  it('DURABLE_ACK=auto: a master left with no replica at all is acknowledged without waiting, as off would; replica refuses', async () => {
    const auto = world('auto');
    auto.confirming.delete('redis-a:6379');
    auto.withoutReplica.add('redis-a:6379');
    await expect(auto.durableAck.confirm(bucketOn('1'))).resolves.toBeUndefined();
    expect(codeOf(() => auto.durableAck.admit(() => bucketOn('1')))).toBe('admitted');
    // For a while the next purchases do not wait at all.
    await expect(auto.durableAck.confirm(bucketOn('1'))).resolves.toBeUndefined();
    expect(auto.waits).toEqual(['redis-a:6379']);

    const replica = world('replica');
    replica.confirming.delete('redis-a:6379');
    replica.withoutReplica.add('redis-a:6379');
    await expect(replica.durableAck.confirm(bucketOn('1'))).rejects.toMatchObject({ code: ErrorCode.Unavailable });
    expect(codeOf(() => replica.durableAck.admit(() => bucketOn('1')))).toBe(ErrorCode.Unavailable);
  });

  it('DURABLE_ACK=auto still waits for a replica that is attached but behind (it could be promoted)', async () => {
    const { durableAck, confirming } = world('auto');
    confirming.delete('redis-a:6379');
    await expect(durableAck.confirm(bucketOn('1'))).rejects.toMatchObject({ code: ErrorCode.Unavailable });
  });
});
