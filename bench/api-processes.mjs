#!/usr/bin/env node
/**
 * The built API as BENCH_API_PROCESSES processes behind one port, with Node's cluster module: this
 * primary accepts each connection and hands it to the processes in turn (round-robin, Node's default
 * outside Windows); a kept-alive connection then stays with its process, so the primary is idle once
 * the load generator's connections are open. The bench's scale section runs it (bench/README.md).
 *
 * SIGTERM / SIGINT are passed on to every process, which shut down as a lone API does; the primary
 * exits once they all have. If one dies on its own, the others are stopped and the primary exits 1:
 * a configuration that lost a process would measure something else.
 */
import cluster from 'node:cluster';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const processes = Number(process.env.BENCH_API_PROCESSES || 2);
if (!Number.isInteger(processes) || processes < 1) {
  console.error(`BENCH_API_PROCESSES must be a positive integer, got "${process.env.BENCH_API_PROCESSES}"`);
  process.exit(1);
}

// execArgv is the primary's own: each process gets the same preloads (the bench's orphan guard).
cluster.setupPrimary({ exec: path.join(ROOT, 'apps/api/dist/main.js'), execArgv: process.execArgv });
let stopping = false;
let exitCode = 0;
const stop = (signal) => {
  stopping = true;
  for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill(signal);
};
for (let i = 0; i < processes; i++) cluster.fork();
// The first process to listen already answers on the port: the bench waits for this line instead.
let listening = 0;
cluster.on('listening', () => {
  if (++listening === processes) console.log(`api-processes: all ${processes} API processes listening`);
});

cluster.on('exit', (worker, code, signal) => {
  if (!stopping) {
    console.error(`api-processes: API process ${worker.process.pid} exited on its own (${code ?? signal})`);
    exitCode = 1;
    stop('SIGTERM');
  }
  if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(exitCode);
});
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => stop(signal));
