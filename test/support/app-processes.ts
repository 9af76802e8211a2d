import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { exited } from './child-process';
import { waitFor } from './fixtures';
import { freePort } from '../../scripts/lib/ports.mjs';

const API_ENTRY = join(__dirname, '..', '..', 'apps', 'api', 'dist', 'main.js');
const WORKER_ENTRY = join(__dirname, '..', '..', 'apps', 'worker', 'dist', 'main.js');

/** One built app (API or worker) running as a child process, which a test may SIGKILL and start again. */
export interface AppProcess {
  readonly name: string;
  /** The API's HTTP port (kept across restarts); undefined for a worker. */
  readonly port?: number;
  readonly pid: number | undefined;
  readonly running: boolean;
  /** The file its stdout (JSON log lines, warnings and errors) is appended to, across restarts. */
  readonly logFile: string;
  /** SIGSTOP / SIGCONT: a process that hangs (a long pause) and then goes on where it was. */
  pause(): void;
  resume(): void;
  /** SIGKILL: no shutdown hook runs, in-flight requests and batches die with it. */
  kill(): Promise<void>;
  /** Starts it again with the same environment (and port), waiting until it is up. */
  restart(): Promise<void>;
  /** SIGTERM, then SIGKILL if it has not exited after a few seconds. */
  stop(): Promise<void>;
}

export interface AppProcessOptions {
  /** The test's environment (test-env.ts `env`) plus whatever the test adds. */
  env: Record<string, string>;
  name: string;
  /** The API's port, when the test must know it before the process is ready; a free one otherwise. */
  port?: number;
}

/** Where every app process of this test process appends its JSON log lines (one file per app name). */
const LOG_DIR = mkdtempSync(join(tmpdir(), 'fs-app-logs-'));

function spawnApp(entry: string, name: string, env: Record<string, string>): ChildProcess {
  if (!existsSync(entry)) throw new Error(`${entry} is missing: build first (npm test does)`);
  // Warnings and errors only: the JSON lines go to the app's log file for a failing test to be read.
  const log = openSync(join(LOG_DIR, `${name}.log`), 'a');
  const child = spawn(process.execPath, [entry], {
    // A short startup warm-up (ops/startup-warm-up.ts): its path still runs, without a second per boot.
    env: { ...process.env, LOG_LEVEL: 'warn', WARM_UP_REQUESTS: '100', ...env },
    stdio: ['ignore', log, 'pipe'],
  });
  closeSync(log);
  child.stderr?.on('data', (chunk: Buffer) => process.stderr.write(`[${name} ${child.pid}] ${chunk.toString()}`));
  return child;
}

class ManagedProcess implements AppProcess {
  private child?: ChildProcess;

  constructor(
    readonly name: string,
    private readonly entry: string,
    private readonly env: Record<string, string>,
    private readonly ready: () => Promise<void>,
    readonly port?: number,
  ) {}

  get logFile(): string {
    return join(LOG_DIR, `${this.name}.log`);
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get running(): boolean {
    return !!this.child && this.child.exitCode === null && this.child.signalCode === null;
  }

  async start(): Promise<void> {
    const child = spawnApp(this.entry, this.name, this.env);
    this.child = child;
    let died = false;
    const death = exited(child).then(() => (died = true));
    // A process that exits while starting (a bad configuration) fails the start at once.
    await Promise.race([
      this.ready(),
      death.then(() => {
        throw new Error(`${this.name} exited while starting (code ${child.exitCode}, signal ${child.signalCode})`);
      }),
    ]).catch(async (error: unknown) => {
      if (!died) await this.kill();
      throw error;
    });
  }

  pause(): void {
    this.child?.kill('SIGSTOP');
  }

  resume(): void {
    this.child?.kill('SIGCONT');
  }

  async kill(): Promise<void> {
    const child = this.child;
    if (!child) return;
    child.kill('SIGKILL');
    await exited(child);
  }

  restart(): Promise<void> {
    if (this.running) throw new Error(`${this.name} is still running`);
    return this.start();
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (!child || !this.running) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await exited(child);
    clearTimeout(timer);
  }
}

async function httpStatus(url: string): Promise<number> {
  try {
    const response = await request(url);
    await response.body.dump();
    return response.statusCode;
  } catch {
    return 0;
  }
}

/** The built API (`apps/api/dist/main.js`) on a port of its own, up once `/health/ready` answers 200. */
export async function startApiProcess(options: AppProcessOptions): Promise<AppProcess> {
  const port = options.port ?? (await freePort());
  const api = new ManagedProcess(
    options.name,
    API_ENTRY,
    { ...options.env, PORT: String(port) },
    async () => {
      await waitFor(
        `${options.name} ready`,
        () => httpStatus(`http://127.0.0.1:${port}/health/ready`),
        (status) => status === 200,
        60_000,
      );
    },
    port,
  );
  await api.start();
  return api;
}

/**
 * The built worker (`apps/worker/dist/main.js`). It opens no HTTP port but its metrics (port 0 unless the
 * environment chooses one); it counts as up once it has stayed alive for `settleMs` — its first
 * reconciliation and job pickup follow on their own.
 */
export async function startWorkerProcess(options: AppProcessOptions & { settleMs?: number }): Promise<AppProcess> {
  const worker = new ManagedProcess(
    options.name,
    WORKER_ENTRY,
    { WORKER_METRICS_PORT: '0', ...options.env },
    () => new Promise((resolve) => setTimeout(resolve, options.settleMs ?? 1_500)),
  );
  await worker.start();
  return worker;
}

export interface ScaledOutApps {
  apis: AppProcess[];
  workers: AppProcess[];
  stop(): Promise<void>;
}

/** `apiCount` APIs and `workerCount` workers, each its own process, on one environment. */
export async function startScaledOutApps(
  env: Record<string, string>,
  apiCount: number,
  workerCount: number,
): Promise<ScaledOutApps> {
  const apis: AppProcess[] = [];
  const workers: AppProcess[] = [];
  const stop = async () => {
    await Promise.all([...apis, ...workers].map((app) => app.stop()));
  };
  try {
    // One after another: two cold Node starts at once on a small machine take longer than in turn.
    for (let i = 0; i < apiCount; i++) apis.push(await startApiProcess({ env, name: `api-${i + 1}` }));
    for (let i = 0; i < workerCount; i++) workers.push(await startWorkerProcess({ env, name: `worker-${i + 1}` }));
  } catch (error) {
    await stop();
    throw error;
  }
  return { apis, workers, stop };
}
