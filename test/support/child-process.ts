import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';

/** Resolves once the child has exited (at once if it already has). */
export function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) =>
    child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve()),
  );
}

/** Sends `signal` to the child, unless it has exited already, and resolves once it has. */
export async function stopChild(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = exited(child);
  child.kill(signal);
  await gone;
}

/**
 * Stops (SIGSTOP) or continues (SIGCONT) the child as `pause` asks, unless it is not running or already
 * so (`paused`: whether it is stopped now); returns whether it is stopped afterwards.
 */
export function setPaused(child: ChildProcess | undefined, paused: boolean, pause: boolean): boolean {
  if (!child || paused === pause) return paused;
  child.kill(pause ? 'SIGSTOP' : 'SIGCONT');
  return pause;
}

/**
 * Runs one of the repository's scripts (`scripts/<name>`) to its end with `args`, its output piped as a
 * log receives it (not a terminal), and `env` over this process's environment.
 */
export function runScript(
  name: string,
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(__dirname, '..', '..', 'scripts', name), ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
