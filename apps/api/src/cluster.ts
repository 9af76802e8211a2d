import cluster, { type Worker } from 'node:cluster';
import path from 'node:path';
import readline from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { ConfigError, loadConfig } from '@flash-sale/config';
import { pino } from 'pino';
import { serveClusterMetrics } from './metrics/cluster-metrics';

/**
 * The API as API_INSTANCES processes on one port (`node apps/api/dist/cluster.js`). This primary runs
 * no application: it forks that many processes running the normal API (main.ts), which share the
 * listening socket through node:cluster — the primary accepts each connection and hands it to the
 * next process in turn. Every process keeps its state in Redis and MySQL, so any of them can answer
 * any request (docs/architecture.md, "Many processes").
 *
 * - A process that dies (a crash, an OOM kill, a `kill -9`) is forked again after a backoff that grows
 *   while it keeps dying; the others answer meanwhile.
 * - SIGTERM / SIGINT stop every process gracefully (each drains as main.ts does alone), then the primary.
 *   If the primary itself is killed, node:cluster ends the processes it forked.
 * - `/metrics` on any process answers for all of them (metrics/cluster-metrics.ts).
 * - The processes' log lines are relayed whole through the primary's stdout and stderr, so that lines
 *   of two processes never interleave mid-line.
 */

/** Restart backoff of a process that died: 0.5 s, doubling to at most 10 s; reset after 30 s of uptime. */
const RESTART_BACKOFF_MS = { first: 500, max: 10_000, stableAfter: 30_000 };
/** How long a stopping process may drain before it is killed. */
const STOP_GRACE_MS = 10_000;

interface Slot {
  worker: Worker | undefined;
  startedAt: number;
  backoffMs: number;
  restarts: number;
}

function run(): void {
  // Read once here: a configuration error is reported once, not by every process in a restart loop.
  const config = loadConfig();
  const count = config.http.instances;
  const log = pino(
    {
      level: config.ops.logLevel,
      formatters: { level: (label: string) => ({ level: label }) },
      timestamp: pino.stdTimeFunctions.isoTime,
      base: { service: 'api', pid: process.pid, context: 'ApiCluster' },
    },
    process.stdout, // the stream the relayed lines go through too: one writer, whole lines
  );
  cluster.setupPrimary({ exec: path.join(__dirname, 'main.js'), silent: true });
  serveClusterMetrics();

  let stopping = false;
  const fork = (slot: Slot): void => {
    if (stopping) return;
    const worker = cluster.fork();
    slot.worker = worker;
    slot.startedAt = Date.now();
    relayLines(worker.process.stdout, process.stdout);
    relayLines(worker.process.stderr, process.stderr);
    worker.once('exit', (code, signal) => {
      slot.worker = undefined;
      if (stopping) return;
      if (Date.now() - slot.startedAt >= RESTART_BACKOFF_MS.stableAfter) slot.backoffMs = RESTART_BACKOFF_MS.first;
      slot.restarts++;
      log.error(
        `API process ${worker.process.pid} exited unexpectedly (${signal ?? code}); ` +
          `forking another in ${slot.backoffMs} ms (restart #${slot.restarts} of this slot)`,
      );
      setTimeout(() => fork(slot), slot.backoffMs);
      slot.backoffMs = Math.min(slot.backoffMs * 2, RESTART_BACKOFF_MS.max);
    });
  };
  const slots: Slot[] = Array.from({ length: count }, () => ({
    worker: undefined,
    startedAt: 0,
    backoffMs: RESTART_BACKOFF_MS.first,
    restarts: 0,
  }));
  slots.forEach(fork);
  log.info(`API cluster: ${count} processes sharing port ${config.http.port}`);

  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) return; // a second Ctrl-C, or the group's signal after ours: already on the way out
    stopping = true;
    const workers = slots.map((slot) => slot.worker).filter((worker) => worker !== undefined);
    log.info(`${signal}: stopping ${workers.length} API processes`);
    void Promise.all(workers.map(stopWorker)).then(() => process.exit(0));
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, stop);
}

/** SIGTERM (the process drains and exits), then SIGKILL after STOP_GRACE_MS. */
function stopWorker(worker: Worker): Promise<void> {
  return new Promise((resolve) => {
    if (worker.isDead()) return resolve();
    const timer = setTimeout(() => worker.process.kill('SIGKILL'), STOP_GRACE_MS);
    worker.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    worker.process.kill('SIGTERM');
  });
}

function relayLines(from: Readable | null, to: Writable): void {
  if (!from) return;
  readline.createInterface({ input: from, crlfDelay: Infinity }).on('line', (line) => to.write(line + '\n'));
}

try {
  run();
} catch (error) {
  console.error(error instanceof ConfigError ? `Configuration error: ${error.message}` : error);
  process.exit(1);
}
