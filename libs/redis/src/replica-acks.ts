import calculateSlot from 'cluster-key-slot';
import { Cluster, Redis } from 'ioredis';
import { failUnansweredOnDisconnect, type RedisClient } from './redis-client';
import { isRedisUnavailable } from './redis-errors';
import type { KeyBuilder, SaleBucket } from './sale-keys';
import { SILENT_AFTER_MS, watchForSilentLinks } from './silent-link-watch';

interface Waiter {
  /** The counter this waiter's batch writes before its `WAIT`: on the node that holds the waiter's writes. */
  marker: string;
  resolve(confirmed: number): void;
  reject(error: unknown): void;
}

/** How long a marker outlives its last `WAIT`. */
const MARKER_TTL_MS = 60 * 60_000;

/**
 * Where the writes to confirm were made, on a Redis Cluster: a bucket of a sale (its reservations), or a
 * sale's waiting room (its places and passes; a slot of its own). On a single Redis any will do.
 */
export type WrittenTo = SaleBucket | { roomOf: string };

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
 * On a Redis Cluster the writes to confirm are on the master that holds the caller's bucket or room
 * (WrittenTo): the marker is a key of that slot, and the marker and the `WAIT` go to that master over a connection of
 * this class's own (one per master, found from the cluster's slot map). After a failover the slot map
 * names the promoted replica, and the next batches go there.
 */
export class ReplicaAcks {
  private readonly nodes = new Map<string, NodeAcks>();
  /** The longest `WAIT` asked for: a connection's PING waits behind one, so its silence deadline is longer. */
  private longestWaitMs = 0;

  constructor(
    private readonly client: RedisClient,
    private readonly keys: KeyBuilder,
  ) {}

  /**
   * How many replicas confirmed every write answered before this call (at most `replicas`), by
   * `timeoutMs`. `writtenTo`: where the writes to confirm were made (needed on a cluster).
   */
  confirm(replicas: number, timeoutMs: number, writtenTo?: WrittenTo): Promise<number> {
    this.longestWaitMs = Math.max(this.longestWaitMs, timeoutMs);
    return new Promise<number>((resolve, reject) => {
      let node: NodeAcks;
      let marker: string;
      try {
        ({ node, marker } = this.nodeOf(writtenTo));
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
   * The node whose replicas confirm writes to `writtenTo`: the one Redis (`standalone`), or the master that
   * serves its slot in the cluster client's slot map now. Throws while that map is not known.
   */
  nodeKeyOf(writtenTo?: WrittenTo): string {
    if (!(this.client instanceof Cluster)) return 'standalone';
    if (!writtenTo) throw new Error('On a Redis Cluster a durable acknowledgement needs the bucket or room written to');
    const nodeKey = this.client.slots[calculateSlot(this.markerOf(writtenTo))]?.[0];
    if (!nodeKey) throw new Error('The Redis Cluster slot map is not known yet');
    return nodeKey;
  }

  /**
   * How many replicas the master holding `writtenTo`'s writes has now (its `INFO replication`), over this
   * class's own connection to it.
   */
  async replicasOf(writtenTo?: WrittenTo): Promise<number> {
    const { node } = this.nodeOf(writtenTo);
    const replication = await node.connection.info('replication');
    return Number(/^connected_slaves:(\d+)/m.exec(replication)?.[1] ?? 0);
  }

  close(): void {
    for (const node of this.nodes.values()) node.connection.disconnect();
    this.nodes.clear();
  }

  /** The marker written before a `WAIT` for `writtenTo`: a key of its slot. */
  private markerOf(writtenTo: WrittenTo): string {
    return 'roomOf' in writtenTo ? this.keys.roomReplicaAck(writtenTo.roomOf) : this.keys.bucket(writtenTo).replicaAck;
  }

  private nodeOf(writtenTo: WrittenTo | undefined): { node: NodeAcks; marker: string } {
    const nodeKey = this.nodeKeyOf(writtenTo);
    if (!(this.client instanceof Cluster)) {
      return { node: this.node(nodeKey, () => this.client.duplicate()), marker: this.keys.replicaAckMarker };
    }
    const marker = this.markerOf(writtenTo!);
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
      // A link a partition left silent is torn down and made again once it heals, as the shared client's
      // are: otherwise every confirmation on this master times out until TCP's retransmission backoff
      // happens to resend, and its purchases are refused long after the replica is back. A probe's PING
      // waits behind a `WAIT` in flight: the deadline counts the longest one in.
      watchForSilentLinks(connection, { silentAfterMs: SILENT_AFTER_MS + this.longestWaitMs });
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
    // Sent back to back on one connection: the marker is written, then the WAIT covers it. It expires,
    // so a room's marker does not outlive the room's keys for long.
    const marked = node.connection.set(batch[0]!.marker, Date.now(), 'PX', MARKER_TTL_MS);
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
