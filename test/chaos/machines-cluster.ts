import { appendFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster, Redis } from 'ioredis';
import { createConnection } from 'mysql2/promise';
import {
  ADMIN_PASSWORD,
  type MachineDeployment,
  startMachineDeployment,
} from '../../scripts/lib/machine-deployment.mjs';
import { machinesAvailable } from '../../scripts/lib/machines.mjs';
import { chaosEnv } from './cluster-env';
import { ExplorerError, removeFolder } from './explorer-error';
import type { SystemUnderTest } from './system-under-test';

/** Settings of the one-machine world the deployment takes too: they make quiet come within seconds. */
const TIMINGS = [
  'LOG_LEVEL',
  'WARM_UP_REQUESTS',
  'REDIS_FALLBACK',
  'RATE_LIMIT_PURCHASES_POINTS',
  'RATE_LIMIT_SUBMIT_TOKENS_POINTS',
  'RATE_LIMIT_QUEUE_JOINS_POINTS',
  'SHED_MAX_EVENT_LOOP_DELAY_MS',
  'LEASE_SIZE',
  'LEASE_LOW_WATER',
  'RECONCILE_INTERVAL_MS',
  'RECOVERY_INTERVAL_MS',
  'RECOVERY_GRACE_MS',
  'IDLE_SALE_CHECK_INTERVAL_MS',
  'WORKER_LOCK_DURATION_MS',
  'EXPIRY_SWEEP_INTERVAL_MS',
  'PAYMENT_CALLBACK_DELAY_MS',
  'PAYMENT_CALLBACK_JITTER_MS',
];

/** A link cut, or a machine isolated, that is in force: what heal undoes. */
export interface NetworkFault {
  /** As the history stamps it: `split [redis-2] | [redis-1, worker-1]`. */
  label: string;
  /** Directed links dropped at their receiver: `[from, to]`. */
  cuts: [string, string][];
  isolated: string[];
}

/**
 * The machines world (docs/chaos.md "Worlds"): the compose deployment as machines on a real network
 * (scripts/lib/machine-deployment.mjs) — HAProxy, two API machines, two workers, a Redis Cluster of
 * three masters with a replica each on another machine, a MariaDB primary and its replica. Clients
 * reach it through the balancer only, as buyers do. Its faults are the network's: links cut in one
 * direction or both, machines isolated, the machines split in two (faults/network.ts).
 */
export class MachinesCluster implements SystemUnderTest {
  private static readonly running = new Set<MachinesCluster>();
  readonly apiUrls: readonly string[];
  readonly adminPassword = ADMIN_PASSWORD;
  /**
   * Longer than on one machine: after a heal, a connection a cut left silent is found and reconnected
   * within seconds (watchForSilentLinks), and a BullMQ worker that stopped taking jobs is replaced after
   * 10 s (supervised-worker.ts) — both come before the writing resumes.
   */
  readonly quietWithinMs = 30_000;
  readonly redisKeyPrefix: string;
  /** Its APIs never restart mid-exploration: no warm-up sale appears after a run's census. */
  readonly lastLeftoverSweepAtMs = 0;
  private readonly inForce: NetworkFault[] = [];
  /** A MySQL failover this run, as the history stamps it (the deployment restores a replica when it settles). */
  private mysqlFailover: string | undefined;

  private constructor(
    readonly dir: string,
    readonly deployment: MachineDeployment,
  ) {
    // Both of the schedule's "API instances" are the balancer: a buyer never picks the machine.
    this.apiUrls = [deployment.baseUrl, deployment.baseUrl];
    this.redisKeyPrefix = deployment.appEnv['REDIS_KEY_PREFIX'] ?? 'fs';
  }

  /**
   * `appEnv`: settings for the apps on top of the explorer's (`--app-env DURABLE_ACK=off`, say);
   * `mysqlReplication`: `async` to watch a failover lose commits (semi-synchronous by default).
   */
  static async start(
    appEnv: Record<string, string> = {},
    mysqlReplication?: 'semi-sync' | 'async',
  ): Promise<MachinesCluster> {
    const available = machinesAvailable();
    if (!available.ok) throw new ExplorerError(`the machines world cannot be made here: ${available.why}`);
    const dir = mkdtempSync(join(tmpdir(), 'fs-chaos-machines-'));
    const timings = chaosEnv('machines', { databaseUrl: '', redisUrl: '' });
    const env = Object.fromEntries(TIMINGS.map((name) => [name, timings[name]!]));
    const deployment = await startMachineDeployment({
      dir,
      env: { ...env, ...appEnv },
      mysqlReplication,
      log: (line) => appendFileSync(join(dir, 'deployment.log'), `${new Date().toISOString()} ${line}\n`),
    });
    const cluster = new MachinesCluster(dir, deployment);
    MachinesCluster.running.add(cluster);
    return cluster;
  }

  /**
   * The MySQL primary at its machine's own address, not the floating one the apps use: the checker reads
   * straight from whichever machine is the primary now, past the address a failover moves.
   */
  get databaseUrl(): string {
    const url = new URL(this.deployment.databaseUrl);
    url.hostname = this.network.machines[this.deployment.mysqlPair.roles().primary]!.address;
    return url.toString();
  }

  get network(): MachineDeployment['network'] {
    return this.deployment.network;
  }

  /** Applies a network fault and keeps it in force until `healAll`. */
  async apply(fault: NetworkFault): Promise<void> {
    this.inForce.push(fault);
    await Promise.all([
      ...fault.cuts.map(([from, to]) => this.network.cut(from, to)),
      ...fault.isolated.map((machine) => this.network.isolate(machine)),
    ]);
  }

  /**
   * The MySQL primary lost (its process killed, or its machine cut off) and its replica promoted; false
   * if refused (no replica to promote, or one the primary was not waiting for). `lagFirstMs` > 0: what the
   * primary sends its replica is lost that long first (kept in force until a heal), as a replica that fell
   * behind before its primary died — the failover that loses commits where nothing waits for the replica.
   */
  async failOverMysql(fence: 'kill' | 'isolate', lagFirstMs: number): Promise<boolean> {
    const { primary, replica } = this.deployment.mysqlPair.roles();
    if (lagFirstMs > 0 && replica !== undefined) {
      await this.apply({ label: `cut(${primary} -> ${replica})`, cuts: [[primary, replica]], isolated: [] });
      await new Promise((resolve) => setTimeout(resolve, lagFirstMs));
    }
    const result = await this.deployment.mysqlPair.failover(fence);
    if ('refused' in result) return false;
    this.mysqlFailover = `mysqlFailover(${result.fenced} ${fence === 'kill' ? 'killed' : 'cut off'}, ${result.promoted} promoted)`;
    return true;
  }

  /**
   * The Redis machine whose master serves `key`'s slot now, as the cluster's own nodes tell it (`CLUSTER
   * SLOTS`, asked of the first node that answers from this host).
   */
  async redisMachineServing(key: string): Promise<string> {
    const machineAt = (ip: string) =>
      Object.values(this.network.machines).find((machine) => machine.address === ip)?.name;
    for (const { host, port } of this.deployment.redisMasters) {
      const node = new Redis({ host, port, lazyConnect: true, connectTimeout: 2_000, commandTimeout: 2_000 });
      node.on('error', () => undefined);
      try {
        await node.connect();
        const slot = Number(await node.call('CLUSTER', 'KEYSLOT', key));
        const ranges = (await node.call('CLUSTER', 'SLOTS')) as [number, number, [string, number]][];
        const served = ranges.find(([low, high]) => slot >= low && slot <= high);
        const machine = served && machineAt(served[2][0]);
        if (machine) return machine;
      } catch {
        // This node cannot say now: the next one may.
      } finally {
        node.disconnect();
      }
    }
    throw new ExplorerError(`no Redis machine could say which master serves ${key}`);
  }

  get faultsInForceCount(): number {
    return this.inForce.length;
  }

  async healAll(): Promise<void> {
    this.inForce.length = 0;
    await this.network.healAll();
  }

  async mysql() {
    return createConnection({ uri: this.databaseUrl, supportBigNumbers: true, bigNumberStrings: false });
  }

  redisReader(): Cluster {
    return new Cluster(
      this.deployment.redisMasters.map(({ host, port }) => ({ host, port })),
      { lazyConnect: true, redisOptions: { maxRetriesPerRequest: 1 } },
    );
  }

  clockOffsetMs(): number {
    return 0;
  }

  faultsInForce(): string {
    return [...this.inForce.map((fault) => fault.label), ...(this.mysqlFailover ? [this.mysqlFailover] : [])].join(
      ', ',
    );
  }

  async restoreAll(): Promise<void> {
    this.inForce.length = 0;
    this.mysqlFailover = undefined;
    try {
      await this.deployment.settle();
    } catch (error) {
      throw new ExplorerError('the deployment did not settle after its links were healed', error);
    }
  }

  recover(): Promise<void> {
    return this.restoreAll();
  }

  resumeMysql(): void {
    // No fault here stops MySQL's process.
  }

  static async stopRunning(): Promise<void> {
    await Promise.all([...MachinesCluster.running].map((cluster) => cluster.stop()));
  }

  async stop(): Promise<void> {
    if (!MachinesCluster.running.delete(this)) return;
    await this.deployment.stop();
  }

  removeWorkingDirectory(): void {
    removeFolder(this.dir);
  }
}
