/**
 * A private redis-server: for `npm start` when no Redis answers (persistent, data under .data/), and
 * for the bench (throwaway: Redis's command time and CPU are read server-wide, so only a Redis of its
 * own measures one run alone). Node built-ins only.
 */
import { redisAnswers } from './probes.mjs';
import { spawnServer, waitForReady } from './processes.mjs';

/**
 * Starts `binary` on 127.0.0.1:`port` with its files in `dir` (append-only file when `appendOnly`,
 * never RDB snapshots) and resolves once it answers PING.
 * @returns {Promise<{ url: string, pid: number, stop: () => Promise<void> }>}
 */
export async function startRedisServer({ binary, port, dir, logFile, appendOnly, onUnexpectedExit = () => {} }) {
  const url = `redis://127.0.0.1:${port}`;
  // prettier-ignore
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', appendOnly ? 'yes' : 'no', '--dir', dir, '--daemonize', 'no'];
  const instance = spawnServer('redis', binary, args, logFile, onUnexpectedExit);
  await waitForReady(instance, () => redisAnswers(url), 15_000);
  return { url, pid: instance.child.pid, stop: instance.stop };
}
