import { EventEmitter } from 'node:events';
import { Cluster, type Redis } from 'ioredis';
import type { RedisClient } from './redis-client';

/**
 * The state of the shared Redis connection, for the code that answers differently while Redis is
 * down (the MySQL fallback, limits that cannot be counted) or must act when it comes back.
 *
 * "Lost" and "back" mean the same for one Redis and for a cluster: the copy of the data this process
 * talks to may have changed. A single client drops its connection when that happens (any restart or
 * failover closes it). A cluster client stays `ready` when one of its masters fails over — it only
 * reads its slot map again — so for a cluster a master that leaves the client's pool, or a slot that
 * another master serves, is a loss too, and the next slot map read after it is the way back.
 */
export class RedisConnection {
  private readonly masters?: ClusterMasters;

  constructor(private readonly client: RedisClient) {
    if (client instanceof Cluster) this.masters = new ClusterMasters(client);
  }

  /** Whether commands are being sent now (not queued behind a reconnect). */
  get isReady(): boolean {
    return this.client.status === 'ready';
  }

  /** Called on every (re)connection that is ready for commands. */
  onReady(listener: () => void): void {
    this.client.on('ready', listener);
  }

  /** Called whenever the connection is lost (before any reconnection). */
  onClose(listener: () => void): void {
    this.client.on('close', listener);
  }

  /**
   * Called each time the connection is ready again after a loss; not for its first connection, which
   * finds the state of a running system intact.
   */
  onReconnect(listener: () => void): void {
    let connectedBefore = this.isReady;
    this.onReady(() => {
      if (connectedBefore) listener();
      connectedBefore = true;
    });
    this.masters?.on('back', listener);
  }

  /**
   * Called each time a connection that had been ready is lost, before it reconnects: ioredis sends the
   * commands queued meanwhile as soon as it is back, before any 'ready' listener hears of it. In a
   * cluster, also each time a master is lost or replaced (see the class's comment): before the client
   * can send a command to the replica promoted in its place.
   */
  onConnectionLost(listener: () => void): void {
    let connectedBefore = this.isReady;
    this.onReady(() => (connectedBefore = true));
    this.onClose(() => {
      if (connectedBefore) listener();
    });
    this.masters?.on('lost', listener);
  }

  async ping(): Promise<void> {
    await this.client.ping();
  }

  /**
   * Whether Redis writes every change to its append-only file (`aof`), or keeps them only in memory
   * between snapshots (`none`): without it, a Redis crash loses the reservations not yet written to
   * MySQL — the `202`s they answered (docs/failure-model.md). In a cluster, the node that answers.
   */
  async persistence(): Promise<'aof' | 'none'> {
    return persistenceIn(await this.client.info('persistence'));
  }

  /**
   * persistence() of every node that takes writes: the one Redis, or each master of a cluster (its
   * replicas only copy them), named `host:port` as the client knows it.
   */
  async persistenceOfEachMaster(): Promise<{ node: string; persistence: 'aof' | 'none' }[]> {
    const nodes: Redis[] = this.client instanceof Cluster ? this.client.nodes('master') : [this.client];
    return Promise.all(
      nodes.map(async (node) => ({
        node: `${node.options.host ?? '127.0.0.1'}:${node.options.port ?? 6379}`,
        persistence: persistenceIn(await node.info('persistence')),
      })),
    );
  }

  /**
   * The masters of a cluster that answer this process no PING within `deadlineMs` while the master that
   * answers first does not see them failing: this process is cut off from them (a partition, a firewall),
   * the cluster is not, and a process that can reach them should take this one's requests. A master the
   * cluster sees failing too is a failover under way, which every process meets alike: not listed. When
   * no master answers, every one is listed. None for a single Redis (its PING says it all).
   */
  async mastersCutOff(deadlineMs: number): Promise<string[]> {
    if (!(this.client instanceof Cluster)) return [];
    const masters = this.client.nodes('master').map((node) => ({
      node,
      name: `${node.options.host ?? '127.0.0.1'}:${node.options.port ?? 6379}`,
    }));
    const answered = await Promise.all(masters.map(({ node }) => answersWithin(node.ping(), deadlineMs)));
    const silent = masters.filter((_, index) => !answered[index]);
    const witness = masters.find((_, index) => answered[index]);
    if (silent.length === 0 || !witness) return silent.map(({ name }) => name);
    let view = '';
    const asked = witness.node.call('CLUSTER', 'NODES').then((nodes) => (view = String(nodes)));
    if (!(await answersWithin(asked, deadlineMs))) return silent.map(({ name }) => name);
    const failing = failingNodes(view);
    return silent.filter(({ name }) => !failing.has(name)).map(({ name }) => name);
  }
}

/** Resolves whether `command` settled well within `ms` (false when it failed or took longer). */
function answersWithin(command: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  return Promise.race([
    command.then(
      () => true,
      () => false,
    ),
    late,
  ]).finally(() => clearTimeout(timer));
}

/**
 * The nodes `CLUSTER NODES` (as one node sees the cluster) flags as failing, `fail?` (that node's own
 * suspicion) or `fail` (the cluster's verdict), by their `host:port`.
 */
function failingNodes(clusterNodes: string): Set<string> {
  const failing = new Set<string>();
  for (const line of clusterNodes.split('\n')) {
    const [, address, flags] = line.split(' ');
    if (!address || !flags) continue;
    if (flags.split(',').some((flag) => flag === 'fail' || flag === 'fail?')) failing.add(address.split('@')[0]!);
  }
  return failing;
}

/** `INFO persistence` says whether the append-only file is on. */
function persistenceIn(info: string): 'aof' | 'none' {
  return /^aof_enabled:1\r?$/m.test(info) ? 'aof' : 'none';
}

/**
 * Watches a ready cluster client's masters. `lost`: a master left the client's pool (its connection
 * ended: killed, or dropped by a slot map without it), or a slot map read names another master for a
 * slot (a failover its client did not see die: a partition, a manual failover, a slot moved). The
 * first comes before the client can send anything to a replica promoted in the dead master's place:
 * until the slot map is read again, its slots still name the dead master. `back`: the first slot map
 * read after a loss (which may still name the dead master, until the cluster promotes its replica: a
 * command sent to it then fails, and the next loss follows).
 */
class ClusterMasters extends EventEmitter {
  /** The master of each slot at the last slot map read; empty until the first. */
  private mastersBySlot: string[] = [];
  private lostSinceRead = false;

  constructor(private readonly cluster: Cluster) {
    super();
    cluster.on('-node', (node: Redis) => {
      if (cluster.status !== 'ready' || node.options.readOnly) return;
      this.lose();
      // The client reads its slot map again only when a command is redirected or on its timer: ask now,
      // so that `back` does not wait for either (a failed read is tried again by the timer).
      cluster.refreshSlotsCache();
    });
    cluster.on('refresh', () => this.slotMapRead());
  }

  private slotMapRead(): void {
    const current = this.cluster.slots.map((nodes) => nodes[0] ?? '');
    const before = this.mastersBySlot;
    this.mastersBySlot = current;
    if (this.cluster.status === 'ready' && before.some((master, slot) => master !== '' && master !== current[slot])) {
      this.lose();
    }
    if (this.lostSinceRead) {
      this.lostSinceRead = false;
      this.emit('back');
    }
  }

  private lose(): void {
    this.lostSinceRead = true;
    this.emit('lost');
  }
}
