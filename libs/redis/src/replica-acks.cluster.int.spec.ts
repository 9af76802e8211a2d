import { waitFor } from '../../../test/support/fixtures';
import { untilReady } from '../../../test/support/test-redis';
import type { Cluster } from 'ioredis';
import { startRedisCluster, type LocalRedisCluster } from '../../../scripts/lib/redis-cluster.mjs';
import { createRedisClient } from './redis-client';
import { ReplicaAcks } from './replica-acks';
import { KeyBuilder, type SaleBucket } from './sale-keys';

/**
 * ReplicaAcks on a real Redis Cluster with a replica per master, across the failover of the master that
 * holds a bucket — asked nothing else meanwhile, as while DurableAck refuses every purchase (its probes
 * are then the only commands about the bucket). The acknowledgements must follow the slot to the
 * promoted replica on their own.
 */
describe('replica acknowledgements across a failover (real Redis Cluster with replicas)', () => {
  const TIMEOUT_MS = 500;
  const keys = new KeyBuilder('fs-test-replica-acks-cluster');
  const bucket: SaleBucket = { saleId: '42', index: 0, count: 1 };
  let cluster: LocalRedisCluster;
  let client: Cluster;
  let acks: ReplicaAcks;

  beforeAll(async () => {
    cluster = await startRedisCluster({ masters: 3, replicasPerMaster: 1 });
    client = createRedisClient({ url: 'redis://unused', clusterNodes: cluster.nodes }) as Cluster;
    await untilReady(client);
    acks = new ReplicaAcks(client, keys);
  }, 60_000);

  afterAll(async () => {
    acks?.close();
    client?.disconnect();
    await cluster?.stop();
  });

  it('DURABLE_ACK=auto sees a replica for every master of this cluster, and not of one without replicas', async () => {
    expect(await acks.everyMasterHasReplica()).toBe(true);
    const bare = await startRedisCluster({ masters: 3, replicasPerMaster: 0 });
    const bareClient = createRedisClient({ url: 'redis://unused', clusterNodes: bare.nodes }) as Cluster;
    try {
      await untilReady(bareClient);
      expect(await new ReplicaAcks(bareClient, keys).everyMasterHasReplica()).toBe(false);
    } finally {
      bareClient.disconnect();
      await bare.stop();
    }
  }, 60_000);

  it("after the bucket's master is SIGKILLed and its replica promoted, confirmations come from the new master", async () => {
    const marker = keys.bucket(bucket).replicaAck;
    const victim = await cluster.masterOfSlot(await cluster.keySlot(marker));
    // A replica acknowledges once its first sync is done, which a busy machine can take seconds to finish.
    await waitFor(
      "the bucket's replica in sync",
      () => acks.confirm(1, TIMEOUT_MS, bucket),
      (confirmed) => confirmed === 1,
      30_000,
    );

    const promoted = await cluster.killMasterAndAwaitFailover(victim);
    await cluster.restartAsReplica(victim); // the old master comes back as the promoted one's replica

    // Nothing but the acknowledgements asks the cluster about the slot: a try or two may fail while the
    // slot map is read again; then the new master (whose replica is the old one) confirms.
    const answers: string[] = [];
    for (let attempt = 0; attempt < 20 && answers.at(-1) !== '1'; attempt++) {
      answers.push(
        await acks.confirm(1, TIMEOUT_MS, bucket).then(
          (confirmed) => String(confirmed),
          (error: unknown) => (error as Error).message.split(' ', 1)[0]!,
        ),
      );
      if (answers.at(-1) !== '1') await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(answers.at(-1)).toBe('1');
    expect(answers.length).toBeLessThanOrEqual(5);
    expect(client.slots[await cluster.keySlot(marker)]?.[0]).toBe(`127.0.0.1:${promoted}`);
  }, 120_000);
});
