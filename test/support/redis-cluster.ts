import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port';

export interface LocalRedisCluster {
  nodes: string[];
  stop(): Promise<void>;
}

async function waitForPing(port: number): Promise<void> {
  for (let i = 0; i < 100; i++) {
    try {
      if (execFileSync('redis-cli', ['-p', String(port), 'ping'], { encoding: 'utf8' }).trim() === 'PONG') return;
    } catch {
      // not up yet
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`redis-server on ${port} did not start`);
}

/**
 * A real three-master Redis Cluster from the local `redis-server`, on free ports in a temp folder,
 * for tests that must not assume cluster behaviour (slots, CROSSSLOT) but see it.
 */
export async function startRedisCluster(masters = 3): Promise<LocalRedisCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'fs-redis-cluster-'));
  const ports = await Promise.all(Array.from({ length: masters }, freePort));
  // (Each node also opens its cluster bus on port + 10000.)
  const processes: ChildProcess[] = ports.map((port) =>
    spawn(
      'redis-server',
      [
        '--port',
        String(port),
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
      ],
      { stdio: 'ignore' },
    ),
  );
  const stop = async () => {
    for (const child of processes) child.kill('SIGKILL');
    await Promise.all(
      processes.map(
        (child) => new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.once('exit', resolve))),
      ),
    );
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await Promise.all(ports.map(waitForPing));
    execFileSync(
      'redis-cli',
      ['--cluster', 'create', ...ports.map((port) => `127.0.0.1:${port}`), '--cluster-replicas', '0', '--cluster-yes'],
      { stdio: 'ignore' },
    );
    for (let i = 0; i < 100; i++) {
      const info = execFileSync('redis-cli', ['-p', String(ports[0]), 'cluster', 'info'], { encoding: 'utf8' });
      if (info.includes('cluster_state:ok')) return { nodes: ports.map((port) => `127.0.0.1:${port}`), stop };
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error('Redis Cluster did not reach cluster_state:ok');
  } catch (error) {
    await stop();
    throw error;
  }
}
