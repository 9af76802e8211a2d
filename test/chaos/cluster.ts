import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, mkdtempSync, rmSync, type WriteStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { createConnection } from 'mysql2/promise';
import { exited, setPaused } from '../support/child-process';
import { freePort } from '../../scripts/lib/ports.mjs';
import { type PrivateMariaDb, startPrivateMariaDb } from '../support/private-mariadb';
import { ReplyDroppingProxy } from '../support/reply-dropping-proxy';
import { ADMIN_PASSWORD, chaosEnv } from './cluster-env';
import { ExplorerError, removeFolder } from './explorer-error';
import { skewedClockEnv } from './faults/clock-skew';
import { DelayingProxy } from './faults/delaying-proxy';
import { RedisCopies } from './faults/redis-copies';
import { LaggingReplica, RedisNode } from './faults/redis-nodes';
import type { SystemUnderTest } from './system-under-test';

/** Run from the sources (jest: test/chaos) or compiled (test/chaos/dist/test/chaos): the repository root either way. */
const REPO = [join(__dirname, '..', '..'), join(__dirname, '..', '..', '..', '..', '..')].find((dir) =>
  existsSync(join(dir, 'package.json')),
)!;
const API_ENTRY = join(REPO, 'apps', 'api', 'dist', 'main.js');
const WORKER_ENTRY = join(REPO, 'apps', 'worker', 'dist', 'main.js');
const MIGRATE_ENTRY = join(REPO, 'libs', 'db', 'dist', 'migrate.js');
const SHARED_MYSQL = process.env['TEST_MYSQL_URL'] ?? 'mysql://root@127.0.0.1:3306';

export { ADMIN_PASSWORD };
export const API_INSTANCES = 2;

export interface ClusterOptions {
  /** A MariaDB of the explorer's own (needed to SIGSTOP it); otherwise a database on the shared server. */
  privateMysql: boolean;
  /** Settings for the apps on top of the explorer's (`--app-env`). */
  appEnv?: Record<string, string>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A process asked to stop (SIGTERM) is SIGKILLed after this long. */
const GRACEFUL_STOP_MS = 5_000;

/**
 * The system under test as real processes: a private Redis with an append-only file, a proxy in front
 * of it that can lose replies, MariaDB, two API instances and one worker, all built binaries. Its
 * methods are the nemesis' hands: they kill, stop, resume and restart those processes, restore Redis
 * from an older copy or fail it over to a lagging replica, slow MySQL down, and skew clocks.
 */
export class ChaosCluster implements SystemUnderTest {
  /** Clusters not stopped yet, for a Ctrl-C to clean up (stopRunningClusters). */
  private static readonly running = new Set<ChaosCluster>();
  readonly dir: string;
  readonly apiUrls: string[];
  /** The Redis the apps reach through the proxies: the first one, or the replica promoted last. */
  private primary: RedisNode;
  private replica: LaggingReplica | undefined;
  private redisNodes = 0;
  private readonly apis: (ChildProcess | undefined)[] = [];
  /** Clock offsets (seconds) of the processes running under a skewed clock: `api0`, `api1`, `worker`. */
  private readonly skews = new Map<string, number>();
  /**
   * When the latest API start began whose warm-up swept earlier warm-ups' ended sales (it said ready, and
   * logged no failure to look for or remove them): a warm-up sale that ended before must be gone.
   */
  lastLeftoverSweepAtMs = 0;
  /** Per API instance: when its current process started, until it is seen ready; and whether its sweep failed. */
  private readonly apiStarts: ({ atMs: number; sweepFailed: boolean } | undefined)[] = [];
  private worker: ChildProcess | undefined;
  private workerStopped = false;
  private mysqlStopped = false;
  private readonly logs: WriteStream;
  /** The copies of Redis' file `snapshotRedis` took. */
  private readonly copies: RedisCopies;

  private constructor(
    readonly env: Record<string, string>,
    primary: RedisNode,
    private readonly apiPorts: number[],
    /** API instances → Redis: loses replies. */
    readonly proxy: ReplyDroppingProxy,
    /** Worker → Redis: moved to a promoted replica with the API's proxy. */
    private readonly workerLink: DelayingProxy,
    /** API instances and worker → MySQL: slowed down by `mysql-slow`. */
    private readonly mysqlLink: DelayingProxy,
    private readonly mariadb: PrivateMariaDb | undefined,
    /** Straight to MySQL, for migrations and the checker (never through anything the nemesis touches). */
    readonly databaseUrl: string,
    dir: string,
  ) {
    this.primary = primary;
    this.dir = dir;
    this.apiUrls = apiPorts.map((port) => `http://127.0.0.1:${port}`);
    this.logs = createWriteStream(join(dir, 'processes.log'), { flags: 'a' });
    this.copies = new RedisCopies(dir);
  }

  static async start(options: ClusterOptions): Promise<ChaosCluster> {
    for (const entry of [API_ENTRY, WORKER_ENTRY, MIGRATE_ENTRY]) {
      if (!existsSync(entry)) throw new Error(`${entry} is missing: build first (npx tsc -b tsconfig.json)`);
    }
    const dir = mkdtempSync(join(tmpdir(), 'fs-chaos-'));
    const mariadb = options.privateMysql ? await startPrivateMariaDb() : undefined;
    const id = randomBytes(4).toString('hex');
    const databaseUrl = `${mariadb ? mariadb.serverUrl : SHARED_MYSQL}/flash_sale_test_chaos_${id}`;
    // The apps reach MySQL through the link `mysql-slow` slows down: the same URL, the link's port.
    const appDatabaseUrl = new URL(databaseUrl);
    const primary = new RedisNode(await freePort(), join(dir, 'redis'));
    const proxy = await ReplyDroppingProxy.start(await freePort(), primary.port);
    const workerLink = await DelayingProxy.start(primary.port);
    const mysqlLink = await DelayingProxy.start(Number(appDatabaseUrl.port || 3306), appDatabaseUrl.hostname);
    appDatabaseUrl.hostname = '127.0.0.1';
    appDatabaseUrl.port = String(mysqlLink.port);
    const apiPorts = [await freePort(), await freePort()];
    // The worker reaches Redis through a plain link; the API instances through the reply-dropping proxy (startApi).
    const env = {
      ...chaosEnv(id, { databaseUrl: appDatabaseUrl.toString(), redisUrl: `redis://127.0.0.1:${workerLink.port}` }),
      ...options.appEnv,
    };
    await promisify(execFile)(process.execPath, [MIGRATE_ENTRY], {
      env: { ...process.env, ...env, DATABASE_URL: databaseUrl },
    });
    const cluster = new ChaosCluster(env, primary, apiPorts, proxy, workerLink, mysqlLink, mariadb, databaseUrl, dir);
    ChaosCluster.running.add(cluster);
    await cluster.startRedis({ empty: true });
    for (let index = 0; index < API_INSTANCES; index++) cluster.startApi(index);
    cluster.startWorker();
    await Promise.all(apiPorts.map((_, index) => cluster.waitForApi(index, 30_000)));
    return cluster;
  }

  readonly adminPassword = ADMIN_PASSWORD;
  readonly quietWithinMs = 20_000;

  get redisKeyPrefix(): string {
    return this.env['REDIS_KEY_PREFIX']!;
  }

  get redisPort(): number {
    return this.primary.port;
  }

  redisReader(): Redis {
    return new Redis(this.redisPort, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 1 });
  }

  faultsInForce(): string {
    return [
      !this.redisUp && 'redis down',
      this.workerPaused && 'worker paused',
      this.mysqlPaused && 'mysql paused',
      this.mysqlSlow && 'mysql slow',
      this.clockSkewed && 'clock skewed',
      this.replicaLagging && 'replica lagging',
    ]
      .filter(Boolean)
      .join(', ');
  }

  get redisUp(): boolean {
    return this.primary.up;
  }

  get mysqlSlow(): boolean {
    return this.mysqlLink.delay > 0;
  }

  get clockSkewed(): boolean {
    return this.skews.size > 0;
  }

  get replicaLagging(): boolean {
    return this.replica !== undefined;
  }

  get workerPaused(): boolean {
    return this.workerStopped;
  }

  get mysqlPaused(): boolean {
    return this.mysqlStopped;
  }

  get mysqlPausable(): boolean {
    return this.mariadb !== undefined;
  }

  // ---- Redis ----

  async killRedis(): Promise<void> {
    if (!this.primary.up) return;
    await this.primary.kill();
    this.proxy.cutAll();
    this.workerLink.cutAll();
  }

  /** Starts Redis from its append-only file, or `empty`: the file deleted first (a Redis that lost everything). */
  async startRedis(options: { empty: boolean }): Promise<void> {
    await this.primary.start(options);
  }

  /**
   * A copy of Redis' append-only file as it is now, for `restoreRedisFromSnapshot` (faults/redis-copies.ts);
   * `fresh`: the copies taken before are dropped first (a run's start: an earlier run's copies hold nothing of its sale).
   */
  snapshotRedis(options: { fresh?: boolean } = {}): void {
    this.copies.take(this.primary, options);
  }

  /** SIGKILL, then Redis starts from a copy `snapshotRedis` took (`pick` among them; the newest by default). */
  async restoreRedisFromSnapshot(pick?: number): Promise<void> {
    const copy = this.copies.pick(pick);
    await this.killRedis();
    this.primary.replaceDataWith(copy);
    await this.startRedis({ empty: false });
  }

  /** A replica of Redis, synced, then cut off and stopped: it lags from now on. */
  async startLaggingReplica(): Promise<void> {
    if (this.replica || !this.primary.up) return;
    this.redisNodes += 1;
    const replica = await LaggingReplica.start(this.primary.port, join(this.dir, `redis-${this.redisNodes}`));
    // Stopped meanwhile (a Ctrl-C stops the cluster while a run plays): leave nothing running.
    if (!ChaosCluster.running.has(this)) return replica.discard();
    this.replica = replica;
    replica.lag();
  }

  /** Failover: the primary SIGKILLed, the lagging replica promoted, the API instances and worker moved to it. */
  async promoteLaggingReplica(): Promise<void> {
    const replica = this.replica;
    if (!replica) return;
    this.replica = undefined;
    await this.killRedis();
    const old = this.primary;
    this.primary = await replica.promote();
    this.proxy.retarget(this.primary.port);
    this.workerLink.retarget(this.primary.port);
    removeFolder(old.dir);
  }

  // ---- MySQL's link ----

  /** Every chunk between the apps and MySQL, either way, passed on `ms` later (0: at once). */
  slowMysql(ms: number): void {
    this.mysqlLink.setDelay(ms);
  }

  // ---- clocks ----

  /** Restarts an API instance (SIGTERM) with its wall clock `offsetSeconds` off (0: the machine's). */
  async restartApiWithClock(index: number, offsetSeconds: number): Promise<void> {
    const api = this.apis[index];
    this.apis[index] = undefined;
    if (api) await stopGracefully(api);
    this.setSkew(`api${index}`, offsetSeconds);
    this.startApi(index);
    await this.waitForApi(index, 15_000);
  }

  /** The same for the worker. */
  async restartWorkerWithClock(offsetSeconds: number): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    if (worker) {
      if (this.workerStopped) worker.kill('SIGCONT');
      await stopGracefully(worker);
    }
    this.setSkew('worker', offsetSeconds);
    this.startWorker();
  }

  /** The offset (ms) of API instance `index`'s wall clock from the machine's (0 unless clock-skew set one). */
  clockOffsetMs(index: number): number {
    return (this.skews.get(`api${index}`) ?? 0) * 1_000;
  }

  /**
   * An API instance restarted cleanly, as a deployment does: SIGTERM, a new process on the same clock,
   * which runs its startup warm-up before it says ready (waited for while Redis and MySQL are up: with
   * one of them down it is not ready, rightly). False if it did not even listen in time.
   */
  async restartApi(index: number): Promise<boolean> {
    const api = this.apis[index];
    this.apis[index] = undefined;
    if (api) await stopGracefully(api);
    this.startApi(index);
    if (!(await this.waitForApi(index, 30_000))) return false;
    if (this.redisUp && !this.mysqlStopped) await this.waitForApiReady(index, 25_000);
    return true;
  }

  private setSkew(name: string, offsetSeconds: number): void {
    if (offsetSeconds === 0) this.skews.delete(name);
    else this.skews.set(name, offsetSeconds);
  }

  private clockEnv(name: string): Record<string, string> {
    const offset = this.skews.get(name);
    return offset === undefined ? {} : skewedClockEnv(offset);
  }

  // ---- API instances ----

  startApi(index: number): void {
    const env = {
      ...this.env,
      ...this.clockEnv(`api${index}`),
      REDIS_URL: `redis://127.0.0.1:${this.proxy.port}`,
      PORT: String(this.apiPorts[index]),
    };
    const start = { atMs: Date.now(), sweepFailed: false };
    this.apiStarts[index] = start;
    const api = this.spawnLogged(`api${index}`, API_ENTRY, env);
    api.stdout?.on('data', (chunk: Buffer) => {
      if (/sales not looked for|not wholly removed/.test(chunk.toString())) start.sweepFailed = true;
    });
    this.apis[index] = api;
  }

  async killApi(index: number): Promise<void> {
    const api = this.apis[index];
    this.apis[index] = undefined;
    if (!api) return;
    api.kill('SIGKILL');
    await exited(api);
  }

  /** True once the instance answers its liveness route; false at the deadline. */
  waitForApi(index: number, timeoutMs: number): Promise<boolean> {
    return this.waitForRoute(index, '/health', timeoutMs);
  }

  /** True once the instance says Redis, MySQL and the queue all answer it; false at the deadline. */
  waitForApiReady(index: number, timeoutMs: number): Promise<boolean> {
    return this.waitForRoute(index, '/health/ready', timeoutMs);
  }

  private async waitForRoute(index: number, path: string, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      try {
        const response = await fetch(`${this.apiUrls[index]}${path}`, { signal: AbortSignal.timeout(1_000) });
        if (response.ok && path === '/health/ready') this.noteReady(index);
        if (response.ok) return true;
      } catch {
        // not listening yet
      }
      await sleep(50);
    }
    return false;
  }

  /** An API seen ready for the first time since it started: its warm-up is over. */
  private noteReady(index: number): void {
    const start = this.apiStarts[index];
    this.apiStarts[index] = undefined;
    if (start && !start.sweepFailed) this.lastLeftoverSweepAtMs = Math.max(this.lastLeftoverSweepAtMs, start.atMs);
  }

  // ---- worker ----

  startWorker(): void {
    this.worker = this.spawnLogged('worker', WORKER_ENTRY, { ...this.env, ...this.clockEnv('worker') });
    this.workerStopped = false;
  }

  async killWorker(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    this.workerStopped = false;
    if (!worker) return;
    worker.kill('SIGKILL');
    await exited(worker);
  }

  pauseWorker(): void {
    this.workerStopped = setPaused(this.worker, this.workerStopped, true);
  }

  resumeWorker(): void {
    this.workerStopped = setPaused(this.worker, this.workerStopped, false);
  }

  // ---- MySQL ----

  pauseMysql(): void {
    const pid = this.mariadb?.pid();
    if (pid === undefined || this.mysqlStopped) return;
    process.kill(pid, 'SIGSTOP');
    this.mysqlStopped = true;
  }

  resumeMysql(): void {
    const pid = this.mariadb?.pid();
    if (pid === undefined || !this.mysqlStopped) return;
    process.kill(pid, 'SIGCONT');
    this.mysqlStopped = false;
  }

  /** Everything running and answering again, whatever the faults left behind: the start of quiet. */
  async restoreAll(): Promise<void> {
    this.resumeMysql();
    this.slowMysql(0);
    this.resumeWorker();
    await this.replica?.discard();
    this.replica = undefined;
    await this.startRedis({ empty: false });
    for (const name of [...this.skews.keys()]) {
      if (name === 'worker') await this.restartWorkerWithClock(0);
      else await this.restartApiWithClock(Number(name.slice(3)), 0);
    }
    if (!this.worker || this.worker.exitCode !== null) this.startWorker();
    for (let index = 0; index < API_INSTANCES; index++) {
      const api = this.apis[index];
      if (!api || api.exitCode !== null || api.signalCode !== null) this.startApi(index);
    }
    for (let index = 0; index < API_INSTANCES; index++) {
      if (!(await this.waitForApiReady(index, 30_000))) {
        throw new ExplorerError(`API ${index} is not ready 30 s after everything was restored`);
      }
    }
  }

  /**
   * After an explorer error left the processes in any state: every process stopped and started again
   * (Redis from its file, or empty if that cannot start), then `restoreAll`. The next run starts on a
   * fresh sale, so nothing it judges depends on what the error left behind.
   */
  async recover(): Promise<void> {
    this.resumeMysql();
    this.slowMysql(0);
    await this.replica?.discard().catch(() => undefined);
    this.replica = undefined;
    this.skews.clear();
    await this.killRedis();
    try {
      await this.startRedis({ empty: false });
    } catch {
      await this.primary.kill();
      await this.startRedis({ empty: true });
    }
    await this.killWorker();
    for (let index = 0; index < API_INSTANCES; index++) await this.killApi(index);
    await this.restoreAll();
  }

  /** A MySQL connection for the checker (never through anything the nemesis touches). */
  async mysql() {
    return createConnection({ uri: this.databaseUrl, supportBigNumbers: true, bigNumberStrings: false });
  }

  /** Stops every cluster still running (an interrupted exploration leaves no process behind). */
  static async stopRunning(): Promise<void> {
    await Promise.all([...ChaosCluster.running].map((cluster) => cluster.stop()));
  }

  async stop(): Promise<void> {
    if (!ChaosCluster.running.delete(this)) return;
    this.resumeMysql();
    this.resumeWorker();
    const children = [this.worker, ...this.apis].filter((child): child is ChildProcess => !!child);
    for (const child of children) child.kill('SIGKILL');
    await Promise.all([...children.map(exited), this.primary.kill(), this.replica?.discard()]);
    await Promise.all([this.proxy.close(), this.workerLink.close(), this.mysqlLink.close()]);
    this.logs.end();
    if (this.mariadb) await this.mariadb.destroy();
    else {
      const connection = await createConnection({ uri: SHARED_MYSQL });
      await connection.query(`DROP DATABASE IF EXISTS \`${new URL(this.databaseUrl).pathname.slice(1)}\``);
      await connection.end();
    }
  }

  /** Removes the working directory (the processes' log and Redis' file); kept after a failure. */
  removeWorkingDirectory(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }

  private spawnLogged(name: string, entry: string, env: Record<string, string>): ChildProcess {
    const child = spawn(process.execPath, [entry], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const prefix = `[${name} ${child.pid}] `;
    const write = (chunk: Buffer) => this.logs.write(prefix + chunk.toString());
    child.stdout?.on('data', write);
    child.stderr?.on('data', write);
    return child;
  }
}

/** SIGTERM, and SIGKILL if it has not exited after GRACEFUL_STOP_MS. */
async function stopGracefully(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const timer = setTimeout(() => child.kill('SIGKILL'), GRACEFUL_STOP_MS);
  child.kill('SIGTERM');
  await exited(child);
  clearTimeout(timer);
}
