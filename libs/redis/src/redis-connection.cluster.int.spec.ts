import { waitFor } from '../../../test/support/fixtures';
import { untilReady } from '../../../test/support/test-redis';
import { type Cluster, Redis } from 'ioredis';
import { startRedisCluster, type LocalRedisCluster } from '../../../scripts/lib/redis-cluster.mjs';
import { createRedisClient } from './redis-client';
import { RedisConnection } from './redis-connection';

/**
 * RedisConnection over a real Redis Cluster with a replica per master. A cluster client stays `ready`
 * when one master fails over, so what the product arms on a lost connection (the incarnation check
 * before a sale sells again, the waiting room written back) must hear of the master's loss from the
 * client's pool and slot map — before the client sends anything to the replica promoted in its place,
 * which may be a stale copy.
 */
describe('RedisConnection on a Redis Cluster: a master lost or replaced is a lost connection', () => {
  let cluster: LocalRedisCluster;
  let client: Cluster;
  /** What happened, in order: the connection's events and the commands answered. */
  const events: string[] = [];

  beforeAll(async () => {
    cluster = await startRedisCluster({ masters: 3, replicasPerMaster: 1 });
    client = createRedisClient({ url: 'redis://unused', clusterNodes: cluster.nodes }) as Cluster;
    const connection = new RedisConnection(client);
    connection.onConnectionLost(() => events.push('lost'));
    connection.onReconnect(() => events.push('back'));
    await untilReady(client);
  }, 60_000);

  afterAll(async () => {
    client?.disconnect();
    await cluster?.stop();
  });

  /** The replica of the master serving `slot` (a busy machine's nodes may take a moment to all know it). */
  async function replicaServing(slot: number): Promise<number> {
    const master = await cluster.masterOfSlot(slot);
    return waitFor(
      "the master's replica in the cluster's view",
      () => cluster.replicaOf(master).catch(() => 0),
      (port) => port > 0,
      30_000,
    );
  }

  /** The command's answer once the cluster serves the key again (a few tries while the slot map moves). */
  async function answered(command: () => Promise<unknown>, what: string): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await command();
        events.push(what);
        return;
      } catch (error) {
        if (attempt === 50) throw error;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  }

  it("a replica's loss is none: the masters and their data are as they were", async () => {
    const key = 'fs-test-connection:replica';
    await answered(() => client.set(key, '1'), 'written');
    const replica = await replicaServing(await cluster.keySlot(key));
    events.length = 0;
    await cluster.killNode(replica);
    // Past the client's periodic slot map read (every 5 s), which sees the replica gone.
    await new Promise((resolve) => setTimeout(resolve, 6_000));
    await answered(() => client.get(key), 'read');
    expect(events).toEqual(['read']);
    await cluster.restartAsReplica(replica);
  }, 60_000);

  it('a master SIGKILLed and its replica promoted: lost before the promoted replica answers anything, then back', async () => {
    const key = 'fs-test-connection:killed';
    await answered(() => client.set(key, 'before'), 'written');
    const victim = await cluster.masterOfSlot(await cluster.keySlot(key));
    events.length = 0;
    // Nothing is sent while the master dies: every answer after this comes from the promoted replica.
    const promoted = await cluster.killMasterAndAwaitFailover(victim);
    await answered(() => client.get(key), 'answered by the promoted replica');
    await waitFor(
      'back',
      async () => events,
      (seen) => seen.includes('back'),
      15_000,
    );
    expect(events.indexOf('lost')).toBeGreaterThanOrEqual(0);
    expect(events.indexOf('lost')).toBeLessThan(events.indexOf('answered by the promoted replica'));
    expect(events.lastIndexOf('back')).toBeGreaterThan(events.lastIndexOf('lost'));
    expect(client.slots[await cluster.keySlot(key)]?.[0]).toBe(`127.0.0.1:${promoted}`);
    await cluster.restartAsReplica(victim);
  }, 90_000);

  it('a manual failover while the old master lives on (no connection ends): lost once the slot map shows it, then back', async () => {
    const key = 'fs-test-connection:handed-over';
    await answered(() => client.set(key, 'before'), 'written');
    const slot = await cluster.keySlot(key);
    const replica = await replicaServing(slot);
    events.length = 0;
    const promoting = new Redis({ port: replica, host: '127.0.0.1', lazyConnect: true });
    try {
      await promoting.connect();
      expect(await promoting.cluster('FAILOVER')).toBe('OK');
    } finally {
      promoting.disconnect();
    }
    await waitFor(
      'the replica to take over',
      () => cluster.masterOfSlot(slot),
      (port) => port === replica,
      30_000,
    );
    // The next write is redirected (MOVED), which makes the client read its slot map again.
    await answered(() => client.set(key, 'after'), 'written after');
    // Nodes learn of the failover one by one: a slot map read from one that has not yet may name the old
    // master again, which is one more loss; each is followed by a read that is back.
    const seen = await waitFor(
      'lost, then back',
      async () => [...events],
      (now) => now.includes('lost') && now.lastIndexOf('back') > now.lastIndexOf('lost'),
      15_000,
    );
    expect(seen).toContain('written after');
  }, 90_000);
  it('mastersCutOff: a master that stops answering is this process being cut off, until the cluster sees it fail too', async () => {
    const connection = new RedisConnection(client);
    expect(await connection.mastersCutOff(1_000)).toEqual([]);
    const slot = await cluster.keySlot('fs-test-connection:cut-off');
    const master = await cluster.masterOfSlot(slot);
    cluster.signal(master, 'SIGSTOP');
    try {
      // At once, before its node timeout: the other masters still count it up, so the silence is this
      // process's alone — what a readiness probe reports, so the balancer sends buyers elsewhere.
      expect(await connection.mastersCutOff(300)).toEqual([`127.0.0.1:${master}`]);
      // Once the cluster flags it too, every process meets the same outage (a failover is under way): not
      // this process's link, and not listed.
      await waitFor(
        'the cluster to see the stopped master fail',
        () => connection.mastersCutOff(300),
        (cut) => cut.length === 0,
        30_000,
      );
    } finally {
      cluster.signal(master, 'SIGCONT');
    }
  }, 60_000);
});
