import { Cluster, type Redis } from 'ioredis';
import type { RedisClient } from './redis-client';

/**
 * The state of the shared Redis connection, for the code that answers differently while Redis is
 * down (the MySQL fallback, limits that cannot be counted) or must act when it comes back.
 */
export class RedisConnection {
  constructor(private readonly client: RedisClient) {}

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
  }

  /**
   * Called each time a connection that had been ready is lost, before it reconnects: ioredis sends the
   * commands queued meanwhile as soon as it is back, before any 'ready' listener hears of it.
   */
  onConnectionLost(listener: () => void): void {
    let connectedBefore = this.isReady;
    this.onReady(() => (connectedBefore = true));
    this.onClose(() => {
      if (connectedBefore) listener();
    });
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
}

/** `INFO persistence` says whether the append-only file is on. */
function persistenceIn(info: string): 'aof' | 'none' {
  return /^aof_enabled:1\r?$/m.test(info) ? 'aof' : 'none';
}
