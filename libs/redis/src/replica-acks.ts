import calculateSlot from 'cluster-key-slot';
import { Cluster, Redis } from 'ioredis';
import { failUnansweredOnDisconnect, type RedisClient } from './redis-client';
import { isRedisUnavailable } from './redis-errors';
import type { KeyBuilder, SaleBucket } from './sale-keys';

interface Waiter {
  /** The counter this waiter's batch writes before its `WAIT`: on the node that holds the waiter's writes. */
  marker: string;
  resolve(confirmed: number): void;
  reject(error: unknown): void;
}

/** One connection to one Redis node (the node itself, or one master of a cluster) and its batches. */
interface NodeAcks {
  connection: RedisClient;
  waiting: Waiter[];
  inFlight: boolean;
}

/**
 * Durable acknowledgement (DURABLE_ACK=replica): waits until replicas hold every write made so far, on a
 * connection of its own. `WAIT` blocks the connection it is sent on for up to its timeout; on the shared
 * connection a missing replica would hold every other command (token issuance, rate limits, every
 * purchase) behind it.
 *
 * `WAIT` covers only the writes of the connection it is sent on, so this connection first writes a
 * marker of its own: Redis runs commands one at a time and replicates them in that order, and the
 * marker is sent after the caller's writes were answered, so a replica that has the marker has them too.
 * Callers are batched: everyone who asks while a `WAIT` is out shares the next marker and `WAIT` (one
 * pair per batch, however many purchases wait), never the one already sent, whose marker may predate
 * their writes.
 *
 * On a Redis Cluster the writes to confirm are on the master that holds the caller's bucket: the marker
 * is a key of that bucket's slot, and the marker and the `WAIT` go to that master over a connection of
 * this class's own (one per master, found from the cluster's slot map). After a failover the slot map
 * names the promoted replica, and the next batches go there.
 */
export class ReplicaAcks {
  private readonly nodes = new Map<string, NodeAcks>();

  constructor(
    private readonly client: RedisClient,
    private readonly keys: KeyBuilder,
  ) {}

  /**
   * How many replicas confirmed every write answered before this call (at most `replicas`), by
   * `timeoutMs`. `bucket`: where the writes to confirm were made (needed on a cluster).
   */
  confirm(replicas: number, timeoutMs: number, bucket?: SaleBucket): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      let node: NodeAcks;
      let marker: string;
      try {
        ({ node, marker } = this.nodeOf(bucket));
      } catch (error) {
        reject(error);
        return;
      }
      node.waiting.push({ marker, resolve, reject });
      if (!node.inFlight) this.sendBatch(node, replicas, timeoutMs);
    });
  }

  /**
   * Whether every master the app writes to has a replica now: asked of each master itself (`INFO
   * replication`), since another node's view of the cluster can lag a replica's arrival by seconds.
   * Throws while a cluster's slot map is not known yet (the caller asks again).
   */
  async everyMasterHasReplica(): Promise<boolean> {
    const masters = this.client instanceof Cluster ? this.client.nodes('master') : [this.client];
    if (masters.length === 0) throw new Error('The Redis Cluster slot map is not known yet');
    const replications = await Promise.all(masters.map((master) => master.info('replication')));
    return replications.every((replication) => Number(/^connected_slaves:(\d+)/m.exec(replication)?.[1] ?? 0) > 0);
  }

  /**
   * The node whose replicas confirm writes to `bucket`: the one Redis (`standalone`), or the master that
   * serves the bucket's slot in the cluster client's slot map now. Throws while that map is not known.
   */
  nodeKeyOf(bucket?: SaleBucket): string {
    if (!(this.client instanceof Cluster)) return 'standalone';
    if (!bucket) throw new Error('On a Redis Cluster a durable acknowledgement needs the bucket written to');
    const nodeKey = this.client.slots[calculateSlot(this.keys.bucket(bucket).replicaAck)]?.[0];
    if (!nodeKey) throw new Error('The Redis Cluster slot map is not known yet');
    return nodeKey;
  }

  /**
   * How many replicas the master holding `bucket`'s writes has now (its `INFO replication`), over this
   * class's own connection to it.
   */
  async replicasOf(bucket?: SaleBucket): Promise<number> {
    const { node } = this.nodeOf(bucket);
    const replication = await node.connection.info('replication');
    return Number(/^connected_slaves:(\d+)/m.exec(replication)?.[1] ?? 0);
  }

  close(): void {
    for (const node of this.nodes.values()) node.connection.disconnect();
    this.nodes.clear();
  }

  private nodeOf(bucket: SaleBucket | undefined): { node: NodeAcks; marker: string } {
    const nodeKey = this.nodeKeyOf(bucket);
    if (!(this.client instanceof Cluster)) {
      return { node: this.node(nodeKey, () => this.client.duplicate()), marker: this.keys.replicaAckMarker };
    }
    const marker = this.keys.bucket(bucket!).replicaAck;
    const cluster = this.client;
    return {
      node: this.node(nodeKey, () => {
        const [host, port] = nodeKey.split(':');
        return new Redis({ ...cluster.options.redisOptions, host, port: Number(port) });
      }),
      marker,
    };
  }

  private node(key: string, connect: () => RedisClient): NodeAcks {
    let node = this.nodes.get(key);
    if (!node) {
      const connection = connect();
      // A WAIT cut off by a lost connection is answered (rejected), never left hanging with the batch.
      failUnansweredOnDisconnect(connection);
      // Its failures reach the waiting purchases through their commands; the outage is reported elsewhere.
      connection.on('error', () => undefined);
      node = { connection, waiting: [], inFlight: false };
      this.nodes.set(key, node);
    }
    return node;
  }

  /**
   * A master that failed over answers its marker with `MOVED` (it is a replica now) or is gone. The slot
   * map this class reads is the cluster client's, which ioredis updates only when one of its own commands
   * is redirected or loses its node; while durable acknowledgement refuses every purchase (DurableAck),
   * nothing may send one, and every probe would go to the old node for ever. So the map is read again.
   */
  private relearnSlotsAfter(error: unknown): void {
    if (this.client instanceof Cluster && isRedisUnavailable(error)) this.client.refreshSlotsCache();
  }

  private sendBatch(node: NodeAcks, replicas: number, timeoutMs: number): void {
    const batch = node.waiting;
    node.waiting = [];
    node.inFlight = true;
    // Sent back to back on one connection: the marker is written, then the WAIT covers it.
    const marked = node.connection.incr(batch[0]!.marker);
    const waited = node.connection.call('WAIT', replicas, timeoutMs);
    Promise.all([marked, waited])
      .then(
        ([, confirmed]) => batch.forEach((waiter) => waiter.resolve(Number(confirmed))),
        (error: unknown) => {
          this.relearnSlotsAfter(error);
          batch.forEach((waiter) => waiter.reject(error));
        },
      )
      .finally(() => {
        node.inFlight = false;
        if (node.waiting.length > 0) this.sendBatch(node, replicas, timeoutMs);
      });
  }
}
