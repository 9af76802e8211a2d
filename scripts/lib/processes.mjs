/**
 * Child processes for `npm start` and the bench: spawning with output to a log file, waiting until
 * something answers, stopping a whole process group. Node built-ins only: `npm start` uses it before
 * `npm install`.
 */
import { spawn } from 'node:child_process';
import { accessSync, closeSync, constants, openSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * Children started detached survive their parent, so if this process dies from an uncaught error
 * they are killed here, each with its process group. ('exit' handlers must be synchronous: SIGKILL is
 * the only option left.)
 */
export const killOnExit = new Set();
process.on('exit', () => {
  for (const child of killOnExit)
    if (child.exitCode === null && child.signalCode === null) signalGroup(child, 'SIGKILL');
});

/**
 * Spawns `command` with its output appended to `logFile` (a pipe nobody drains would stall it), in its
 * own process group: a Ctrl-C in the terminal reaches only us, and we stop our children in the order
 * their dependencies need. `exited` resolves once, on exit or on a failure to spawn at all.
 */
export function spawnLogged(command, args, { logFile, env = process.env, cwd, ipc = false }) {
  const out = openSync(logFile, 'a');
  const stdio = ipc ? ['ignore', out, out, 'ipc'] : ['ignore', out, out];
  const child = spawn(command, args, { cwd, env, stdio, detached: true });
  closeSync(out);
  // A failure to spawn emits 'error' and no 'exit'; both end the process's life here.
  const exited = new Promise((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    child.once('error', (error) => resolve({ code: error.code, signal: null }));
  });
  killOnExit.add(child);
  exited.then(() => killOnExit.delete(child));
  return { child, exited };
}

/**
 * A server (Redis, MySQL) as a detached child logging to `logFile`. `onUnexpectedExit` is called if it
 * dies after `watch()` (it was ready) and before `stop()`.
 */
export function spawnServer(name, command, args, logFile, onUnexpectedExit) {
  const { child, exited } = spawnLogged(command, args, { logFile });
  let watching = false;
  exited.then(({ code, signal }) => {
    if (watching) onUnexpectedExit(name, code, signal);
  });
  const stop = async () => {
    watching = false;
    await terminate(child, exited, 20_000);
  };
  const watch = () => (watching = true);
  return { name, child, exited, logFile, stop, watch };
}

/** Until `answers()` says the server is up; a server that exits or stays silent is stopped, with its log. */
export async function waitForReady(instance, answers, timeoutMs, hint = '') {
  let exitedEarly = null;
  instance.exited.then((result) => (exitedEarly = result));
  const ready = await waitUntil(async () => exitedEarly !== null || (await answers()), timeoutMs);
  if (ready && exitedEarly === null) return instance.watch();
  await instance.stop();
  const why = exitedEarly
    ? `exited with ${exitedEarly.code ?? exitedEarly.signal}`
    : `did not answer within ${timeoutMs / 1000}s`;
  throw new Error(
    `private ${instance.name} ${why}${hint ? ` (${hint})` : ''}. Last lines of ${instance.logFile}:\n${tail(instance.logFile)}`,
  );
}

/**
 * SIGTERM, then SIGKILL after `graceMs`. Resolves when the process has exited. Our children run
 * detached, each the leader of its own process group: the signal goes to the whole group, so a child
 * that is itself a launcher (`npm run dev` → vite) does not leave its own children behind.
 */
export async function terminate(child, exited, graceMs) {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  signalGroup(child, 'SIGTERM');
  const timer = setTimeout(() => signalGroup(child, 'SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

function signalGroup(child, signal) {
  try {
    process.kill(-child.pid, signal);
  } catch {
    child.kill(signal); // not a group leader (or already gone)
  }
}

/** Polls `check` every `intervalMs` until it returns true (→ true) or `timeoutMs` passes (→ false). */
export async function waitUntil(check, timeoutMs, intervalMs = 250) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** Looks in PATH and in the sbin/Homebrew directories that are often missing from a user's PATH. */
export function findExecutable(names) {
  const dirs = [
    ...(process.env.PATH ?? '').split(path.delimiter),
    '/usr/sbin',
    '/usr/local/sbin',
    '/usr/local/bin',
    '/opt/homebrew/bin',
    '/opt/homebrew/sbin',
  ].filter(Boolean);
  for (const name of names) {
    for (const dir of dirs) {
      const candidate = path.join(dir, name);
      try {
        accessSync(candidate, constants.X_OK);
        return candidate;
      } catch {
        // not here
      }
    }
  }
  return null;
}

/** The last lines of a log file, to show why a child failed. */
export function tail(file, lines = 15) {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/** `.data/mysql` when under the current directory, the absolute path otherwise: shorter messages. */
export function shortPath(file) {
  const relative = path.relative(process.cwd(), file);
  return relative && !relative.startsWith('..') ? relative : file;
}

/** Until `check` holds, or throws naming what it waited for (and the end of its log). */
export async function waitFor(what, check, { timeoutMs = 60_000, exited, logFile } = {}) {
  let gone = false;
  exited?.then(() => (gone = true));
  const ok = await waitUntil(async () => gone || (await check().catch(() => false)), timeoutMs);
  if (ok && !gone) return;
  const why = gone ? 'its process exited' : `not within ${timeoutMs / 1000} s`;
  throw new Error(`waited for ${what}: ${why}${logFile ? `. Last lines of ${logFile}:\n${tail(logFile)}` : ''}`);
}
