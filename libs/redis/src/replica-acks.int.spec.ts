import type { ChildProcess } from 'node:child_process';
import { waitFor } from '../../../test/support/fixtures';
import { freePort } from '../../../scripts/lib/ports.mjs';
import { redisAnswers, startPrivateRedis } from '../../../test/support/private-redis';
import { createRedisClient, type RedisClient } from './redis-client';
import { ReplicaAcks } from './replica-acks';
import { KeyBuilder } from './sale-keys';

/**
 * ReplicaAcks on a private Redis that has no replica: every WAIT runs to its timeout, which makes the
 * batching visible in the marker counter (one increment per WAIT sent).
 */
describe('replica acknowledgements (real Redis, no replica)', () => {
  const TIMEOUT_MS = 300;
  const keys = new KeyBuilder('fs-test-replica-acks');
  let server: ChildProcess;
  let redis: RedisClient;
  let acks: ReplicaAcks;

  let port: number;

  beforeAll(async () => {
    port = await freePort();
    server = startPrivateRedis(port);
    await waitFor('private Redis', () => redisAnswers(port), Boolean, 10_000);
    redis = createRedisClient({ url: `redis://127.0.0.1:${port}`, clusterNodes: [] });
    acks = new ReplicaAcks(redis, keys);
  });
  afterAll(() => {
    acks.close();
    redis.disconnect();
    server.kill('SIGKILL');
  });

  /** The `WAIT`s this Redis has run, from its command statistics. */
  const waits = async () => Number(/^cmdstat_wait:calls=(\d+)/m.exec(await redis.info('commandstats'))?.[1] ?? 0);

  it('DURABLE_ACK=auto reads a Redis without a replica as one that cannot confirm, and one with a replica as one that can', async () => {
    expect(await acks.everyMasterHasReplica()).toBe(false);
    const replicaPort = await freePort();
    const replica = startPrivateRedis(replicaPort, { replicaOf: port });
    try {
      await waitFor('a replica connected', () => acks.everyMasterHasReplica(), Boolean, 20_000);
    } finally {
      replica.kill('SIGKILL');
    }
    await waitFor(
      'the replica gone',
      () => acks.everyMasterHasReplica(),
      (found) => !found,
      20_000,
    );
  }, 60_000);

  it('callers that ask while a WAIT is out share the next one, never the one already sent', async () => {
    const waitsBefore = await waits();
    const first = acks.confirm(1, TIMEOUT_MS);
    await new Promise((resolve) => setTimeout(resolve, 50)); // the first WAIT is out
    const later = Array.from({ length: 10 }, () => acks.confirm(1, TIMEOUT_MS));
    expect(await Promise.all([first, ...later])).toEqual(Array(11).fill(0));
    expect((await waits()) - waitsBefore).toBe(2);
    // Each WAIT followed a marker of its own connection: the marker expires rather than stay for ever.
    expect(await redis.pttl(keys.replicaAckMarker)).toBeGreaterThan(0);
  });

  it('does not hold the shared connection: other commands answer while a WAIT is out', async () => {
    const started = performance.now();
    const waiting = acks.confirm(1, TIMEOUT_MS);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const pingedAfter = await redis.ping().then(() => performance.now() - started);
    expect(pingedAfter).toBeLessThan(TIMEOUT_MS - 100);
    expect(await waiting).toBe(0);
    expect(performance.now() - started).toBeGreaterThanOrEqual(TIMEOUT_MS - 20);
  });
});
