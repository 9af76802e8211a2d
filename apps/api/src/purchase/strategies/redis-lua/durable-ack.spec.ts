import type { AppConfig } from '@flash-sale/config';
import { ErrorCode } from '@flash-sale/domain';
import type { ReplicaAcks, SaleBucket } from '@flash-sale/redis';
import { DurableAck } from './durable-ack';

const config = { purchase: { durableAck: 'replica', durableAckTimeoutMs: 50 } } as AppConfig;
const bucketOn = (saleId: string): SaleBucket => ({ saleId, index: 0, count: 1 });

/**
 * The durable acknowledgement's refusals, per master. The replicas are scripted (which masters' WAITs
 * confirm): what is checked is which purchases DurableAck lets through, not Redis's WAIT (libs/redis
 * replica-acks specs run that on real replicas).
 */
function world() {
  /** Sale id → the master holding its bucket. */
  const masters = new Map([
    ['1', 'redis-a:6379'],
    ['2', 'redis-b:6379'],
  ]);
  const confirming = new Set(['redis-a:6379', 'redis-b:6379']);
  const waits: string[] = [];
  const replicaAcks = {
    nodeKeyOf: (bucket: SaleBucket) => masters.get(bucket.saleId)!,
    confirm: async (_replicas: number, _timeoutMs: number, bucket: SaleBucket) => {
      const master = masters.get(bucket.saleId)!;
      waits.push(master);
      return confirming.has(master) ? 1 : 0;
    },
  } as unknown as ReplicaAcks;
  return { durableAck: new DurableAck(replicaAcks, config), confirming, waits };
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
    expect(codeOf(() => durableAck.admit(bucketOn('1')))).toBe(ErrorCode.Unavailable);
    expect(codeOf(() => durableAck.admit(bucketOn('2')))).toBe('admitted');
    await expect(durableAck.confirm(bucketOn('2'))).resolves.toBeUndefined();
  });

  it("admits that master's purchases again once a probe finds its replica back", async () => {
    const { durableAck, confirming, waits } = world();
    confirming.delete('redis-a:6379');
    await expect(durableAck.confirm(bucketOn('1'))).rejects.toThrow();
    confirming.add('redis-a:6379');
    // The refusal sends one probe of its own, and keeps refusing until it answers.
    expect(codeOf(() => durableAck.admit(bucketOn('1')))).toBe(ErrorCode.Unavailable);
    await new Promise((resolve) => setImmediate(resolve));
    expect(waits).toEqual(['redis-a:6379', 'redis-a:6379']);
    expect(codeOf(() => durableAck.admit(bucketOn('1')))).toBe('admitted');
  });

  it('refuses at once for a second at most: then a purchase waits for a replica itself, and tells again', async () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick'] });
    try {
      const { durableAck, confirming, waits } = world();
      confirming.delete('redis-a:6379');
      await expect(durableAck.confirm(bucketOn('1'))).rejects.toThrow();
      expect(codeOf(() => durableAck.admit(bucketOn('1')))).toBe(ErrorCode.Unavailable);
      await new Promise((resolve) => setImmediate(resolve)); // the probe: still missing
      jest.advanceTimersByTime(1_000);
      expect(codeOf(() => durableAck.admit(bucketOn('1')))).toBe('admitted');
      // That purchase's own WAIT finds the replica still missing: refused at once again.
      await expect(durableAck.confirm(bucketOn('1'))).rejects.toThrow();
      expect(codeOf(() => durableAck.admit(bucketOn('1')))).toBe(ErrorCode.Unavailable);
      expect(waits).toEqual(['redis-a:6379', 'redis-a:6379', 'redis-a:6379', 'redis-a:6379']);
    } finally {
      jest.useRealTimers();
    }
  });
});
