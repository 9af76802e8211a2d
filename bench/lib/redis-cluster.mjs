/**
 * A throwaway Redis Cluster of the bench's own: three masters, no replicas, on free ports, files in the
 * run's temp directory. The scale section measures how a hot sale's script time spreads over them.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort, portIsFree } from '../../scripts/lib/ports.mjs';
import { redisAnswers } from '../../scripts/lib/probes.mjs';
import { findExecutable, spawnServer, waitForReady } from '../../scripts/lib/processes.mjs';
import { require } from './app-dist.mjs';
import { TMP } from './settings.mjs';

/** Redis Cluster's bus listens on the client port + 10000. */
const BUS_PORT_OFFSET = 10_000;

/**
 * `masters` cluster-enabled redis-servers joined with `redis-cli --cluster create` (the slots split
 * evenly), once every node says `cluster_state:ok`. `onUnexpectedExit(name, how, logFile)` is called
 * if a node dies later. Returns the nodes (`host:port`, pid, a plain client of each) and `stop()`.
 */
export async function startRedisCluster({ masters = 3, onUnexpectedExit }) {
  const serverBinary = findExecutable(['redis-server']);
  const cliBinary = findExecutable(['redis-cli']);
  if (!serverBinary || !cliBinary) throw new Error('redis-server and redis-cli are needed for the Redis Cluster');
  const dir = path.join(TMP, 'redis-cluster');
  mkdirSync(dir, { recursive: true });
  const instances = [];
  const nodes = [];
  const stop = async () => {
    for (const node of nodes) node.client?.disconnect();
    await Promise.all(instances.map((instance) => instance.stop().catch(() => {})));
  };
  try {
    for (let i = 0; i < masters; i++) {
      const port = await freeClusterPort();
      // prettier-ignore
      const args = ['--port', String(port), '--bind', '127.0.0.1', '--cluster-enabled', 'yes',
        '--cluster-config-file', path.join(dir, `nodes-${port}.conf`), '--cluster-node-timeout', '5000',
        '--dir', dir, '--save', '', '--appendonly', 'no', '--daemonize', 'no'];
      const logFile = path.join(dir, `redis-${port}.log`);
      const died = (name, code, signal) => onUnexpectedExit(name, code ?? signal, logFile);
      const instance = spawnServer(`redis-cluster-${port}`, serverBinary, args, logFile, died);
      instances.push(instance);
      await waitForReady(instance, () => redisAnswers(`redis://127.0.0.1:${port}`), 15_000);
      nodes.push({ address: `127.0.0.1:${port}`, port, pid: instance.child.pid });
    }
    const created = spawnSync(
      cliBinary,
      ['--cluster', 'create', ...nodes.map((node) => node.address), '--cluster-replicas', '0', '--cluster-yes'],
      { encoding: 'utf8' },
    );
    if (created.status !== 0) throw new Error(`redis-cli --cluster create failed:\n${created.stdout}${created.stderr}`);
    const { Redis } = require('ioredis');
    for (const node of nodes) node.client = new Redis(node.port, '127.0.0.1', { maxRetriesPerRequest: 1 });
    await untilEveryNodeIsOk(nodes);
    for (const node of nodes) node.slots = await slotRanges(node);
    return { nodes, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** A free port whose bus port (+10000) is free too. */
async function freeClusterPort() {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = await freePort();
    if (port + BUS_PORT_OFFSET < 65_536 && (await portIsFree(port + BUS_PORT_OFFSET))) return port;
  }
  throw new Error('no free port with a free cluster bus port (+10000)');
}

async function untilEveryNodeIsOk(nodes, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const states = await Promise.all(nodes.map((node) => node.client.cluster('INFO')));
    if (states.every((info) => info.includes('cluster_state:ok'))) return;
    if (Date.now() > deadline) throw new Error('the Redis Cluster did not reach cluster_state:ok');
    await sleep(100);
  }
}

/** The hash slots a master serves, as `first-last` ranges. */
async function slotRanges(node) {
  const ranges = [];
  for (const [first, last, [host, port]] of await node.client.cluster('SLOTS'))
    if (`${host}:${port}` === node.address) ranges.push(first === last ? `${first}` : `${first}-${last}`);
  return ranges.join(', ');
}
