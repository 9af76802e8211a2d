import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { exited } from './child-process';
import { freePort } from '../../scripts/lib/ports.mjs';

const run = promisify(execFile);

/**
 * How long one command to a node may take. A node that hangs (SIGSTOP) still accepts connections into
 * its kernel backlog and never answers: without a bound, a probe sent there waits for ever.
 */
const NODE_COMMAND_TIMEOUT_MS = 5_000;

/** `redis-cli -p <port> <args>`'s output; rejects when the node does not answer within NODE_COMMAND_TIMEOUT_MS. */
async function cli(port: number, args: string[]): Promise<string> {
  return (await run('redis-cli', ['-p', String(port), ...args], { timeout: NODE_COMMAND_TIMEOUT_MS })).stdout;
}

/** One line of `CLUSTER NODES`, as far as the tests need it. */
export interface ClusterNodeView {
  id: string;
  port: number;
  role: 'master' | 'replica';
  failed: boolean;
  /** The master's node id, for a replica. */
  masterId?: string;
  /** Slot ranges served, for a master: `[first, last]` inclusive. */
  slots: [number, number][];
}

export interface ClusterOptions {
  /** Replicas per master (`redis-cli --cluster create --cluster-replicas`): 1 lets a master fail over. */
  replicasPerMaster?: 0 | 1;
}

export interface LocalRedisCluster {
  /** `host:port` of every node (masters and replicas), for REDIS_CLUSTER_NODES. */
  nodes: string[];
  /** The live topology, read from a node that answers. */
  topology(): Promise<ClusterNodeView[]>;
  /** The slot of `key` (CLUSTER KEYSLOT: the hash tag's slot when it has one). */
  keySlot(key: string): Promise<number>;
  /** The port of the master serving `slot` now. */
  masterOfSlot(slot: number): Promise<number>;
  /** The keys matching the SCAN glob `pattern` that the node on `port` holds. */
  keysOn(port: number, pattern: string): Promise<string[]>;
  /** How many keys matching the SCAN glob `pattern` each live master holds, by port. */
  keysPerMaster(pattern: string): Promise<Map<number, number>>;
  /** The port of the replica of the master on `port`. */
  replicaOf(port: number): Promise<number>;
  /**
   * SIGSTOP (a node that hangs: it answers nothing, replicates nothing) or SIGCONT. The cluster's own
   * reads (topology, slots, keys) ask other nodes while it hangs.
   */
  signal(port: number, signal: 'SIGSTOP' | 'SIGCONT'): void;
  /**
   * SIGKILLs the master on `port` and waits until its replica has taken its slots over and the cluster
   * answers again (`cluster_state:ok` on every node not killed or hung); resolves with the promoted
   * replica's port. `afterKill` runs right after the kill (e.g. to wake a stopped replica only once its
   * master is gone).
   */
  killMasterAndAwaitFailover(port: number, options?: { timeoutMs?: number; afterKill?: () => void }): Promise<number>;
  /**
   * Starts a killed node again with its own cluster config file: the cluster, which gave its slots to the
   * promoted replica meanwhile, makes it that replica's replica. Resolves once it replicates.
   */
  restartAsReplica(port: number, timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function ping(port: number): Promise<boolean> {
  try {
    return (await cli(port, ['ping'])).trim() === 'PONG';
  } catch {
    return false;
  }
}

async function waitForPing(port: number): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await ping(port)) return;
    await sleep(50);
  }
  throw new Error(`redis-server on ${port} did not start`);
}

export function parseClusterNodes(text: string): ClusterNodeView[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line) => {
      const [id, address, flags, master, , , , , ...slotFields] = line.split(' ');
      const flagList = (flags ?? '').split(',');
      return {
        id: id!,
        port: Number(address!.split('@')[0]!.split(':')[1]),
        role: flagList.includes('master') ? 'master' : 'replica',
        failed: flagList.includes('fail') || flagList.includes('fail?'),
        ...(master && master !== '-' ? { masterId: master } : {}),
        // Migrating/importing markers ("[...]") are not slots served.
        slots: slotFields
          .filter((field) => !field.startsWith('['))
          .map((field) => {
            const [first, last] = field.split('-').map(Number);
            return [first!, last ?? first!] as [number, number];
          }),
      };
    });
}

/**
 * A real Redis Cluster from the local `redis-server`, on free ports in a temp folder: three masters by
 * default, optionally each with a replica that takes over when its master dies. For tests that must not
 * assume cluster behaviour (slots, CROSSSLOT, failover) but see it.
 */
export async function startRedisCluster(masters = 3, options: ClusterOptions = {}): Promise<LocalRedisCluster> {
  const replicasPerMaster = options.replicasPerMaster ?? 0;
  const dir = mkdtempSync(join(tmpdir(), 'fs-redis-cluster-'));
  const count = masters * (1 + replicasPerMaster);
  const ports: number[] = [];
  const busPorts: number[] = [];
  // Every node also needs a cluster bus port; port + 10000 (the default) can be past 65535 or taken.
  while (ports.length < count) {
    const [port, busPort] = [await freePort(), await freePort()];
    if (port === busPort || [...ports, ...busPorts].some((taken) => taken === port || taken === busPort)) continue;
    ports.push(port);
    busPorts.push(busPort);
  }
  const processes = new Map<number, ChildProcess>();
  /** Nodes SIGSTOPped by `signal`: they answer nothing until SIGCONT. */
  const hung = new Set<number>();
  const startNode = (index: number) => {
    const port = ports[index]!;
    const child = spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--cluster-port',
        String(busPorts[index]),
        '--bind',
        '127.0.0.1',
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        join(dir, `nodes-${port}.conf`),
        '--dir',
        dir,
        '--save',
        '',
        '--appendonly',
        'no',
        '--cluster-node-timeout',
        '2000',
        // A replica that (re)joins is sent its copy at once: by default a master waits 5 s for other
        // replicas to share the transfer, which only a restarted node ever asks for here.
        '--repl-diskless-sync-delay',
        '0',
      ],
      { stdio: 'ignore' },
    );
    processes.set(port, child);
    hung.delete(port);
  };
  ports.forEach((_, index) => startNode(index));

  const stop = async () => {
    const children = [...processes.values()];
    for (const child of children) child.kill('SIGKILL');
    await Promise.all(children.map(exited));
    rmSync(dir, { recursive: true, force: true });
  };

  /** Runs a command on the first node that answers (a killed or hung one does not). */
  const onAnyNode = async (args: string[]): Promise<string> => {
    let lastError: unknown;
    for (const [port, child] of processes) {
      if (child.exitCode !== null || child.signalCode !== null || hung.has(port)) continue;
      try {
        return await cli(port, args);
      } catch (error) {
        lastError = error;
      }
    }
    throw lastError ?? new Error('no cluster node answers');
  };
  const topology = async () => parseClusterNodes(await onAnyNode(['cluster', 'nodes']));
  const clusterOk = async (port: number) => {
    try {
      return (await cli(port, ['cluster', 'info'])).includes('cluster_state:ok');
    } catch {
      return false;
    }
  };
  const waitUntil = async (what: string, check: () => Promise<boolean>, timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`Redis Cluster: timed out waiting for ${what}`);
      await sleep(100);
    }
  };

  const cluster: LocalRedisCluster = {
    nodes: ports.map((port) => `127.0.0.1:${port}`),
    topology,
    async keySlot(key) {
      return Number((await onAnyNode(['cluster', 'keyslot', key])).trim());
    },
    async masterOfSlot(slot) {
      const master = (await topology()).find(
        (node) => node.role === 'master' && !node.failed && node.slots.some(([a, b]) => a <= slot && slot <= b),
      );
      if (!master) throw new Error(`no live master serves slot ${slot}`);
      return master.port;
    },
    async keysOn(port, pattern) {
      const client = new Redis({
        port,
        host: '127.0.0.1',
        lazyConnect: true,
        maxRetriesPerRequest: 1,
        commandTimeout: NODE_COMMAND_TIMEOUT_MS,
      });
      try {
        const keys: string[] = [];
        let cursor = '0';
        do {
          const [next, found] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
          cursor = next;
          keys.push(...found);
        } while (cursor !== '0');
        return keys;
      } finally {
        client.disconnect();
      }
    },
    async keysPerMaster(pattern) {
      const counts = new Map<number, number>();
      for (const node of await topology())
        if (node.role === 'master' && !node.failed)
          counts.set(node.port, (await cluster.keysOn(node.port, pattern)).length);
      return counts;
    },
    async replicaOf(port) {
      const view = await topology();
      const master = view.find((node) => node.port === port && node.role === 'master');
      const replica = view.find((node) => node.role === 'replica' && node.masterId === master?.id);
      if (!replica) throw new Error(`${port} is not a master with a replica`);
      return replica.port;
    },
    signal(port, signal) {
      processes.get(port)!.kill(signal);
      if (signal === 'SIGSTOP') hung.add(port);
      else hung.delete(port);
    },
    async killMasterAndAwaitFailover(port, { timeoutMs = 30_000, afterKill } = {}) {
      const before = await topology();
      const master = before.find((node) => node.port === port && node.role === 'master');
      if (!master) throw new Error(`${port} is not a master`);
      const replica = before.find((node) => node.role === 'replica' && node.masterId === master.id);
      if (!replica) throw new Error(`master ${port} has no replica to fail over to`);
      const child = processes.get(port)!;
      child.kill('SIGKILL');
      await exited(child);
      afterKill?.();
      await waitUntil(
        `replica ${replica.port} to take over from ${port}`,
        async () => {
          try {
            const view = parseClusterNodes(await cli(replica.port, ['cluster', 'nodes']));
            return view.find((node) => node.id === replica.id)?.role === 'master';
          } catch {
            return false;
          }
        },
        timeoutMs,
      );
      await waitUntil(
        'cluster_state:ok on every live node',
        async () => {
          const live = ports.filter((p) => p !== port && !hung.has(p));
          return (await Promise.all(live.map(clusterOk))).every(Boolean);
        },
        timeoutMs,
      );
      return replica.port;
    },
    async restartAsReplica(port, timeoutMs = 30_000) {
      const index = ports.indexOf(port);
      if (index < 0) throw new Error(`${port} is not a node of this cluster`);
      startNode(index);
      await waitForPing(port);
      await waitUntil(
        `${port} to replicate its former replica`,
        async () => {
          try {
            const info = await cli(port, ['info', 'replication']);
            return info.includes('role:slave') && info.includes('master_link_status:up');
          } catch {
            return false;
          }
        },
        timeoutMs,
      );
      // Its view of the cluster comes back from its config file as it was when it died, possibly with a
      // node flagged failed that is fine now (a replica that hung): until it has learnt otherwise it
      // reports cluster_state:fail, and a topology read from it would be stale.
      await waitUntil('cluster_state:ok', () => clusterOk(port), timeoutMs);
    },
    stop,
  };

  try {
    await Promise.all(ports.map(waitForPing));
    await run('redis-cli', [
      '--cluster',
      'create',
      ...ports.map((port) => `127.0.0.1:${port}`),
      '--cluster-replicas',
      String(replicasPerMaster),
      '--cluster-yes',
    ]);
    await waitUntil('cluster_state:ok', async () => (await Promise.all(ports.map(clusterOk))).every(Boolean), 30_000);
    if (replicasPerMaster > 0)
      await waitUntil(
        'every replica in sync',
        async () => {
          const infos = await Promise.all(ports.map((port) => cli(port, ['info', 'replication'])));
          const replicas = infos.filter((info) => info.includes('role:slave'));
          return (
            replicas.length === masters * replicasPerMaster &&
            replicas.every((info) => info.includes('master_link_status:up'))
          );
        },
        30_000,
      );
    return cluster;
  } catch (error) {
    await stop();
    throw error;
  }
}
