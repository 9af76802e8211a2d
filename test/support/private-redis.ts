import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Socket } from 'node:net';
import type { SaleLayout } from '@flash-sale/domain';
import { buyerBucket, createRedisClient, onlyBucket, type SaleState } from '@flash-sale/redis';
import { stopChild } from './child-process';
import { freePort } from '../../scripts/lib/ports.mjs';

export interface PrivateRedisOptions {
  /** Keep an append-only file in this directory (fsync on every write), so a restart finds the data. */
  aofDir?: string;
  /** Start as a replica of the Redis on 127.0.0.1:`replicaOf`. */
  replicaOf?: number;
}

/** A throwaway redis-server on `port` (no persistence unless asked), for tests that stop Redis under the app. */
export function startPrivateRedis(port: number, options: PrivateRedisOptions = {}): ChildProcess {
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', ''];
  if (options.aofDir) args.push('--appendonly', 'yes', '--appendfsync', 'always', '--dir', options.aofDir);
  else args.push('--appendonly', 'no');
  if (options.replicaOf) args.push('--replicaof', '127.0.0.1', String(options.replicaOf));
  return spawn('redis-server', args, { stdio: 'ignore' });
}

/** True when a Redis on 127.0.0.1:`port` answers PING. */
export function redisAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    socket.once('error', () => resolve(false));
    socket.connect(port, '127.0.0.1', () => {
      socket.write('PING\r\n');
      socket.once('data', (data) => {
        socket.destroy();
        resolve(data.toString().startsWith('+PONG'));
      });
    });
  });
}

/**
 * A redis-server of one test's own on a free port, which the test may kill and start again on the same
 * port while the apps keep their connection settings. `persistent`: it keeps an append-only file in a
 * temporary directory of its own, so a restart finds its data unless the test made it lose it.
 */
export class PrivateRedisServer {
  private process!: ChildProcess;

  private constructor(
    readonly port: number,
    private readonly options: { aofDir?: string; replicaOf?: number },
  ) {}

  /** Starts one and resolves once it answers PING. */
  static async start(options: { persistent?: boolean; replicaOf?: number } = {}): Promise<PrivateRedisServer> {
    const aofDir = options.persistent ? mkdtempSync(join(tmpdir(), 'fs-aof-')) : undefined;
    const server = new PrivateRedisServer(await freePort(), { aofDir, replicaOf: options.replicaOf });
    await server.restart();
    return server;
  }

  /** A primary and a replica of it, their replication link up. */
  static async startWithReplica(): Promise<{ primary: PrivateRedisServer; replica: PrivateRedisServer }> {
    const primary = await PrivateRedisServer.start();
    const replica = await PrivateRedisServer.start({ replicaOf: primary.port });
    await replica.replicationLinked();
    return { primary, replica };
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Starts it (again) on the same port; resolves once it answers PING. */
  async restart(): Promise<void> {
    this.process = startPrivateRedis(this.port, this.options);
    const deadline = Date.now() + 10_000;
    while (!(await redisAnswers(this.port))) {
      if (this.process.exitCode !== null) throw new Error(`private Redis on port ${this.port} exited at start`);
      if (Date.now() > deadline) throw new Error(`private Redis on port ${this.port} did not answer PING`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** For a replica: waits until its link to the master is up (it holds what the master had written). */
  async replicationLinked(): Promise<void> {
    const probe = createRedisClient({ url: this.url, clusterNodes: [] });
    try {
      const deadline = Date.now() + 10_000;
      while (!(await probe.info('replication')).includes('master_link_status:up')) {
        if (Date.now() > deadline) throw new Error(`the replica on port ${this.port} never linked to its master`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    } finally {
      probe.disconnect();
    }
  }

  /** SIGKILLs it (no shutdown save) and resolves once the process is gone. */
  /** SIGSTOP: the server answers nothing while its sockets stay open (a link gone silent); SIGCONT resumes it. */
  signal(signal: 'SIGSTOP' | 'SIGCONT'): void {
    this.process.kill(signal);
  }

  kill(): Promise<void> {
    return stopChild(this.process, 'SIGKILL');
  }

  /** Empties its data directory while it is down: the next start remembers nothing, as after a lost disk. */
  loseData(): void {
    const { aofDir } = this.options;
    if (!aofDir) return;
    rmSync(aofDir, { recursive: true, force: true });
    mkdirSync(aofDir);
  }

  /**
   * A copy of its data directory as it is now (with `appendfsync always`, every write answered so far),
   * to restart from later: what an `everysec` AOF, an RDB snapshot or a lagging replica gives back.
   */
  snapshot(): string {
    const { aofDir } = this.options;
    if (!aofDir) throw new Error('only a persistent private Redis has data to copy');
    const copy = mkdtempSync(join(tmpdir(), 'fs-aof-copy-'));
    cpSync(aofDir, copy, { recursive: true });
    return copy;
  }

  /** While it is down: its data directory becomes `snapshot`'s copy, so the next start comes back older. */
  restoreSnapshot(snapshot: string): void {
    this.loseData();
    cpSync(snapshot, this.options.aofDir!, { recursive: true });
  }

  /** Kills it and deletes its data directory. */
  async destroy(): Promise<void> {
    await this.kill();
    if (this.options.aofDir) rmSync(this.options.aofDir, { recursive: true, force: true });
  }
}

/**
 * A submit token stored where the reservation script looks for it. Script-level tests need no signed
 * token (the API's SubmitTokens signs them; the script only checks the Redis copy).
 */
export async function issueTestToken(
  saleRedis: SaleState,
  sale: string | SaleLayout,
  userId: string,
  ttlSeconds: number,
): Promise<{ token: string; expiresAt: Date }> {
  const token = randomBytes(18).toString('base64url');
  const bucket = typeof sale === 'string' ? onlyBucket(sale) : buyerBucket(sale, userId);
  await saleRedis.storeToken(bucket, token, userId, ttlSeconds);
  return { token, expiresAt: new Date(Date.now() + ttlSeconds * 1000) };
}
