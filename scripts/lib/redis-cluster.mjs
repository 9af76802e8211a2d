/**
 * A real Redis Cluster from the local `redis-server`, on free ports: three masters by default,
 * optionally each with a replica that takes over when its master dies. The tests start one to see
 * cluster behaviour (slots, CROSSSLOT, failover) rather than assume it, and the bench to measure how a
 * hot sale's script time spreads over the masters. Node built-ins and `redis-cli` only: every probe is
 * a `redis-cli` call with a deadline, because a node that hangs (SIGSTOP) still accepts connections into
 * its kernel backlog and never answers.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './ports.mjs';
import { findExecutable, spawnLogged, tail } from './processes.mjs';

const run = promisify(execFile);

/** How long one `redis-cli` call to a node may take. */
const NODE_COMMAND_TIMEOUT_MS = 5_000;

/**
 * One line of `CLUSTER NODES`, as far as the tests need it.
 * @typedef {object} ClusterNodeView
 * @property {string} id
 * @property {number} port
 * @property {'master' | 'replica'} role
 * @property {boolean} failed
 * @property {string} [masterId] The master's node id, for a replica.
 * @property {[number, number][]} slots Slot ranges served, for a master: `[first, last]` inclusive.
 */

/**
 * @typedef {object} RedisClusterOptions
 * @property {number} [masters] 3 unless said.
 * @property {0 | 1} [replicasPerMaster] 1 lets a master fail over to its replica.
 * @property {string} [dir] Where the nodes keep their config files and logs, kept after `stop()`;
 *   without it, a temporary folder that `stop()` removes.
 * @property {number} [nodeTimeoutMs] `cluster-node-timeout`: how long a node may be unreachable before
 *   its peers fail it over (2 s unless said, so that the failover tests are quick).
 * @property {(name: string, how: number | string | null, logFile: string) => void} [onUnexpectedExit]
 *   Called if a node exits after the cluster formed, unless `stop()` or a kill of its own ended it.
 */

/**
 * @typedef {object} LocalRedisCluster
 * @property {string[]} nodes `host:port` of every node (masters and replicas), for REDIS_CLUSTER_NODES.
 * @property {number[]} ports Their ports, in the same order.
 * @property {(port: number) => number | undefined} pid The pid of the node on `port` now.
 * @property {() => Promise<ClusterNodeView[]>} topology The live topology, read from a node that answers.
 * @property {(key: string) => Promise<number>} keySlot The slot of `key` (the hash tag's when it has one).
 * @property {(slot: number) => Promise<number>} masterOfSlot The port of the master serving `slot` now.
 * @property {(port: number, pattern: string) => Promise<string[]>} keysOn The keys matching the SCAN
 *   glob `pattern` that the node on `port` holds.
 * @property {(pattern: string) => Promise<Map<number, number>>} keysPerMaster How many keys matching
 *   `pattern` each live master holds, by port.
 * @property {(port: number) => Promise<number>} replicaOf The port of the replica of the master on `port`.
 * @property {(port: number, signal: 'SIGSTOP' | 'SIGCONT') => void} signal SIGSTOP (a node that hangs:
 *   it answers nothing, replicates nothing) or SIGCONT. The cluster's own reads ask other nodes while
 *   it hangs.
 * @property {(port: number) => Promise<void>} killNode SIGKILLs the node on `port` (a replica, say) and
 *   resolves once it is gone; `restartAsReplica` brings it back.
 * @property {(port: number, options?: { timeoutMs?: number, afterKill?: () => void }) => Promise<number>}
 *   killMasterAndAwaitFailover SIGKILLs the master on `port` and waits until its replica has taken its
 *   slots over and every node neither killed nor hung says `cluster_state:ok`; resolves with the
 *   promoted replica's port. `afterKill` runs right after the kill (e.g. to wake a stopped replica only
 *   once its master is gone).
 * @property {(port: number, timeoutMs?: number) => Promise<void>} restartAsReplica Starts a killed node
 *   again with its own cluster config file: the cluster, which gave its slots to the promoted replica
 *   meanwhile, makes it that replica's replica. Resolves once it replicates.
 * @property {() => Promise<void>} stop SIGKILLs every node.
 */

/**
 * Parses `CLUSTER NODES`.
 * @param {string} text
 * @returns {ClusterNodeView[]}
 */
export function parseClusterNodes(text) {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line) => {
      const [id, address, flags, master, , , , , ...slotFields] = line.split(' ');
      const flagList = flags.split(',');
      return {
        id,
        port: Number(address.split('@')[0].split(':')[1]),
        role: flagList.includes('master') ? 'master' : 'replica',
        failed: flagList.includes('fail') || flagList.includes('fail?'),
        ...(master && master !== '-' ? { masterId: master } : {}),
        // Migrating/importing markers ("[...]") are not slots served.
        slots: slotFields
          .filter((field) => !field.startsWith('['))
          .map((field) => {
            const [first, last] = field.split('-').map(Number);
            return [first, last ?? first];
          }),
      };
    });
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Starts the nodes, joins them with `redis-cli --cluster create` (the slots split evenly, a replica per
 * master when asked) and resolves once every node says `cluster_state:ok` and every replica is in sync.
 * @param {RedisClusterOptions} [options]
 * @returns {Promise<LocalRedisCluster>}
 */
export async function startRedisCluster(options = {}) {
  const { masters = 3, replicasPerMaster = 0, nodeTimeoutMs = 2_000, onUnexpectedExit } = options;
  const serverBinary = findExecutable(['redis-server']);
  const cliBinary = findExecutable(['redis-cli']);
  if (!serverBinary || !cliBinary) throw new Error('redis-server and redis-cli are needed for a Redis Cluster');
  const dir = options.dir ?? mkdtempSync(path.join(tmpdir(), 'fs-redis-cluster-'));
  mkdirSync(dir, { recursive: true });

  /** `redis-cli -p <port> <args>`'s output; rejects when the node does not answer in time. */
  const cli = async (port, args) =>
    (await run(cliBinary, ['-p', String(port), ...args], { timeout: NODE_COMMAND_TIMEOUT_MS })).stdout;

  const count = masters * (1 + replicasPerMaster);
  const ports = [];
  const busPorts = [];
  // Every node also needs a cluster bus port; port + 10000 (the default) can be past 65535 or taken.
  while (ports.length < count) {
    const [port, busPort] = [await freePort(), await freePort()];
    if (port === busPort || [...ports, ...busPorts].some((taken) => taken === port || taken === busPort)) continue;
    ports.push(port);
    busPorts.push(busPort);
  }

  /** The running node of each port: its child, and whether its exit is ours (a kill, `stop()`). */
  const running = new Map();
  /** Nodes SIGSTOPped by `signal`: they answer nothing until SIGCONT. */
  const hung = new Set();
  let formed = false;
  const logFileOf = (port) => path.join(dir, `redis-${port}.log`);
  const startNode = (port) => {
    // prettier-ignore
    const args = ['--port', String(port), '--cluster-port', String(busPorts[ports.indexOf(port)]),
      '--bind', '127.0.0.1', '--cluster-enabled', 'yes', '--cluster-config-file', path.join(dir, `nodes-${port}.conf`),
      '--cluster-node-timeout', String(nodeTimeoutMs), '--dir', dir, '--save', '', '--appendonly', 'no',
      // A replica that (re)joins is sent its copy at once: by default a master waits 5 s for other
      // replicas to share the transfer, which only a restarted node ever asks for here.
      '--repl-diskless-sync-delay', '0', '--daemonize', 'no'];
    const { child, exited } = spawnLogged(serverBinary, args, { logFile: logFileOf(port) });
    const node = { child, exited, expected: false };
    exited.then(({ code, signal }) => {
      if (formed && !node.expected) onUnexpectedExit?.(`redis-cluster-${port}`, code ?? signal, logFileOf(port));
    });
    running.set(port, node);
    hung.delete(port);
  };
  /** SIGKILLs the node on `port` (SIGCONT first if hung) and resolves once it is gone. */
  const killNode = async (port) => {
    const node = running.get(port);
    if (!node) return;
    node.expected = true;
    running.delete(port);
    if (node.child.exitCode === null && node.child.signalCode === null) {
      if (hung.delete(port)) node.child.kill('SIGCONT');
      node.child.kill('SIGKILL');
    }
    await node.exited;
  };
  const stop = async () => {
    await Promise.all([...running.keys()].map(killNode));
    if (!options.dir) rmSync(dir, { recursive: true, force: true });
  };

  const ping = async (port) => {
    try {
      return (await cli(port, ['ping'])).trim() === 'PONG';
    } catch {
      return false;
    }
  };
  const waitForPing = async (port) => {
    for (let i = 0; i < 200; i++) {
      if (await ping(port)) return;
      const child = running.get(port)?.child;
      if (!child || child.exitCode !== null || child.signalCode !== null) break;
      await sleep(50);
    }
    throw new Error(`redis-server on ${port} did not start. Last lines of its log:\n${tail(logFileOf(port))}`);
  };
  /** Runs a command on the first node that answers (a killed or hung one does not). */
  const onAnyNode = async (args) => {
    let lastError;
    for (const [port, { child }] of running) {
      if (hung.has(port) || child.exitCode !== null || child.signalCode !== null) continue;
      try {
        return await cli(port, args);
      } catch (error) {
        lastError = error;
      }
    }
    throw lastError ?? new Error('no cluster node answers');
  };
  const topology = async () => parseClusterNodes(await onAnyNode(['cluster', 'nodes']));
  const clusterOk = async (port) => {
    try {
      return (await cli(port, ['cluster', 'info'])).includes('cluster_state:ok');
    } catch {
      return false;
    }
  };
  const waitUntil = async (what, check, timeoutMs) => {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`Redis Cluster: timed out waiting for ${what}`);
      await sleep(100);
    }
  };

  /** @type {LocalRedisCluster} */
  const cluster = {
    nodes: ports.map((port) => `127.0.0.1:${port}`),
    ports,
    pid: (port) => running.get(port)?.child.pid,
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
      const output = await cli(port, ['--scan', '--pattern', pattern]);
      return output.split('\n').filter(Boolean);
    },
    async keysPerMaster(pattern) {
      const counts = new Map();
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
      running.get(port).child.kill(signal);
      if (signal === 'SIGSTOP') hung.add(port);
      else hung.delete(port);
    },
    killNode,
    async killMasterAndAwaitFailover(port, { timeoutMs = 30_000, afterKill } = {}) {
      // On a busy machine a replica that was just told to replicate may not be in the view yet: wait for it.
      let replica;
      await waitUntil(
        `a replica of master ${port} in the cluster's view`,
        async () => {
          const before = await topology();
          const master = before.find((node) => node.port === port && node.role === 'master');
          if (!master) throw new Error(`${port} is not a master`);
          replica = before.find((node) => node.role === 'replica' && node.masterId === master.id);
          return replica !== undefined;
        },
        timeoutMs,
      );
      await killNode(port);
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
          const live = [...running.keys()].filter((p) => !hung.has(p));
          return (await Promise.all(live.map(clusterOk))).every(Boolean);
        },
        timeoutMs,
      );
      return replica.port;
    },
    async restartAsReplica(port, timeoutMs = 30_000) {
      if (!ports.includes(port)) throw new Error(`${port} is not a node of this cluster`);
      if (running.has(port)) throw new Error(`${port} is running: kill it first`);
      startNode(port);
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
    ports.forEach(startNode);
    await Promise.all(ports.map(waitForPing));
    // prettier-ignore
    await run(cliBinary, ['--cluster', 'create', ...cluster.nodes, '--cluster-replicas', String(replicasPerMaster), '--cluster-yes']);
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
    formed = true;
    return cluster;
  } catch (error) {
    await stop();
    throw error;
  }
}
