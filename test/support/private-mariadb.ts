import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createConnection } from 'mysql2/promise';
import { freePort } from '../../scripts/lib/ports.mjs';

export interface PrivateMariaDb {
  /** `mysql://root@127.0.0.1:<port>` (append `/<database>`). */
  serverUrl: string;
  /** Stops the server (clean shutdown); its data stays for `start`. */
  stop(): Promise<void>;
  /** Starts it again on the same port and data directory. */
  start(): Promise<void>;
  /** Stops it and deletes its data directory. */
  destroy(): Promise<void>;
  /** The running server's process id (for SIGSTOP/SIGCONT), or undefined while it is stopped. */
  pid(): number | undefined;
}

/**
 * A throwaway MariaDB server of its own (temporary data directory, free port, root without a password),
 * for tests that stop and restart MySQL — which they must never do to the shared one.
 */
export async function startPrivateMariaDb(): Promise<PrivateMariaDb> {
  const dir = mkdtempSync(join(tmpdir(), 'fs-mariadb-'));
  const datadir = join(dir, 'data');
  await promisify(execFile)('mariadb-install-db', [
    '--no-defaults',
    '--auth-root-authentication-method=normal',
    `--datadir=${datadir}`,
    '--skip-test-db',
  ]);
  const port = await freePort();
  const serverUrl = `mysql://root@127.0.0.1:${port}`;
  const args = [
    '--no-defaults',
    `--datadir=${datadir}`,
    `--port=${port}`,
    '--bind-address=127.0.0.1',
    `--socket=${join(dir, 'sock')}`,
    `--pid-file=${join(dir, 'mariadbd.pid')}`,
    `--log-error=${join(dir, 'error.log')}`,
    '--skip-networking=0',
    '--innodb-buffer-pool-size=32M',
    // mariadbd refuses to run as root unless told to; as anyone else the switch is not needed.
    ...(process.getuid?.() === 0 ? ['--user=root'] : []),
  ];
  let server: ChildProcess | undefined;

  const start = async () => {
    const child = spawn('mariadbd', args, { stdio: 'ignore' });
    server = child;
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`mariadbd exited with ${child.exitCode}; see ${dir}/error.log`);
      try {
        const connection = await createConnection({ host: '127.0.0.1', port, user: 'root', connectTimeout: 1_000 });
        await connection.query('SELECT 1');
        await connection.end();
        return;
      } catch (error) {
        if (Date.now() > deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  };
  const stop = async () => {
    const child = server;
    server = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  };

  try {
    await start();
  } catch (error) {
    await stop();
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    serverUrl,
    start,
    stop,
    pid: () => server?.pid,
    async destroy() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
