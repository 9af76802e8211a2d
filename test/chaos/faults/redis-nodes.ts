import type { ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync } from 'node:fs';
import { Redis } from 'ioredis';
import { exited, setPaused } from '../../support/child-process';
import { freePort } from '../../../scripts/lib/ports.mjs';
import { redisAnswers, startPrivateRedis } from '../../support/private-redis';
import { ExplorerError, removeFolder } from '../explorer-error';
import { DelayingProxy } from './delaying-proxy';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * One redis-server of the explorer's: a port and a data directory (an append-only file, fsync on every
 * write) that outlive the process, so the nemesis can kill it, restart it from its file, from nothing,
 * or from an older copy of that file.
 */
export class RedisNode {
  private process: ChildProcess | undefined;
  private paused = false;

  constructor(
    readonly port: number,
    readonly dir: string,
  ) {}

  get up(): boolean {
    return this.process !== undefined;
  }

  /** Starts it from its directory (`empty`: emptied first) and resolves once it answers PING. */
  async start(options: { empty: boolean; replicaOf?: number }): Promise<void> {
    if (this.process) return;
    if (options.empty || !existsSync(this.dir)) {
      removeFolder(this.dir);
      mkdirSync(this.dir, { recursive: true });
    }
    const redis = startPrivateRedis(this.port, { aofDir: this.dir, replicaOf: options.replicaOf });
    this.process = redis;
    this.paused = false;
    const deadline = Date.now() + 10_000;
    while (!(await redisAnswers(this.port))) {
      if (redis.exitCode !== null) {
        this.process = undefined;
        throw new ExplorerError(`redis-server on ${this.port} exited with ${redis.exitCode} as it started`);
      }
      if (Date.now() > deadline) {
        await this.kill();
        throw new ExplorerError(`Redis on ${this.port} did not start within 10 s`);
      }
      await sleep(20);
    }
  }

  /** SIGKILL: no shutdown save, the file holds what was fsynced. */
  async kill(): Promise<void> {
    const redis = this.process;
    this.process = undefined;
    if (!redis) return;
    if (this.paused) redis.kill('SIGCONT');
    redis.kill('SIGKILL');
    await exited(redis);
  }

  pause(): void {
    this.paused = setPaused(this.process, this.paused, true);
  }

  resume(): void {
    this.paused = setPaused(this.process, this.paused, false);
  }

  /** A copy of its data directory as it is now, kept in `to` (what a backup or a lagging disk holds). */
  copyDataTo(to: string): void {
    removeFolder(to);
    cpSync(this.dir, to, { recursive: true });
  }

  /** While it is down: its data directory replaced by the copy in `from`. */
  replaceDataWith(from: string): void {
    if (this.process) throw new ExplorerError('replace the data of a stopped Redis only');
    removeFolder(this.dir);
    cpSync(from, this.dir, { recursive: true });
  }

  async command(...args: [string, ...(string | number)[]]): Promise<unknown> {
    const client = new Redis(this.port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 1 });
    try {
      await client.connect();
      return await client.call(...args);
    } finally {
      client.disconnect();
    }
  }
}

/**
 * A real replica of the primary, its replication link through a proxy: `lag()` holds the link and
 * stops the replica (SIGSTOP), so what the primary writes from then on never reaches it — a paused
 * process would otherwise still apply what sits in its socket once resumed; `promote()` (the primary
 * dead) breaks the link, resumes it and makes it a primary (`REPLICAOF NO ONE`) with what it had.
 */
export class LaggingReplica {
  private constructor(
    readonly node: RedisNode,
    private readonly link: DelayingProxy,
  ) {}

  /** A replica of the Redis on `primaryPort`, with its own append-only file in `dir`, fully synced. */
  static async start(primaryPort: number, dir: string): Promise<LaggingReplica> {
    const link = await DelayingProxy.start(primaryPort);
    const replica = new LaggingReplica(new RedisNode(await freePort(), dir), link);
    try {
      await replica.node.start({ empty: true, replicaOf: link.port });
      const deadline = Date.now() + 15_000;
      for (;;) {
        const info = String(await replica.node.command('INFO', 'replication'));
        if (info.includes('master_link_status:up') && info.includes('master_sync_in_progress:0')) break;
        if (Date.now() > deadline) throw new ExplorerError(`the replica on ${replica.node.port} never synced`);
        await sleep(50);
      }
      return replica;
    } catch (error) {
      await replica.discard();
      throw error;
    }
  }

  lag(): void {
    this.link.hold();
    this.node.pause();
  }

  /** The old primary must be dead: the replica keeps what it had applied and takes writes from now on. */
  async promote(): Promise<RedisNode> {
    await this.link.close();
    this.node.resume();
    await this.node.command('REPLICAOF', 'NO', 'ONE');
    return this.node;
  }

  /** Not promoted after all: the replica and its directory go. */
  async discard(): Promise<void> {
    await this.node.kill();
    await this.link.close().catch(() => undefined);
    removeFolder(this.node.dir);
  }
}
