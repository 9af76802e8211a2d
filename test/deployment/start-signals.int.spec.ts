import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { closeWithin } from '../support/bounded-close';
import { waitFor } from '../support/fixtures';
import { freePort } from '../../scripts/lib/ports.mjs';
import { processesWithEnv } from '../support/process-table';
import { createTestEnv, type TestEnv } from '../support/test-env';

const ROOT = join(__dirname, '..', '..');
/** Given to each start: every process it starts inherits it, so the test finds them all, orphans too. */
const MARK = 'FLASH_SALE_TEST_START_MARK';

interface Started {
  child: ChildProcess;
  mark: string;
  output: () => string;
  /**
   * Resolves once every writer of its stdout and stderr is gone: what an orphaned start.mjs wrote last
   * may still be on its way to us when the process table already shows it gone.
   */
  outputClosed: Promise<void>;
}

/**
 * A process manager's view of `npm start`: one process, started in a process group of its own (so a
 * signal to it reaches no one else, unlike a terminal's Ctrl-C, which reaches the whole foreground
 * group), that is sent one signal by pid. `npm start` (npm, which runs the script) or the script itself
 * (`node scripts/start.mjs`), as a manager may be configured to run either. Whatever it had started —
 * the API, the worker, a setup step midway — must be gone once it has exited.
 */
describe('npm start stops all it started when only its own pid is signalled (real processes, MariaDB, Redis)', () => {
  let testEnv: TestEnv;

  beforeAll(async () => {
    testEnv = await createTestEnv();
    // The storefront as npm start would build it: each start below then finds it current.
    execFileSync(process.execPath, [join(ROOT, 'scripts', 'build-storefront.mjs')], { cwd: ROOT, stdio: 'ignore' });
  }, 120_000);

  afterAll(async () => {
    await testEnv.cleanup();
  });

  async function launch(how: 'npm start' | 'node scripts/start.mjs'): Promise<Started> {
    const mark = randomUUID();
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      ...testEnv.env,
      PORT: String(await freePort()),
      API_INSTANCES: '1',
      [MARK]: mark,
    };
    delete env['LOG_FORMAT'];
    const [command, args] =
      how === 'npm start' ? ['npm', ['start']] : [process.execPath, [join(ROOT, 'scripts', 'start.mjs')]];
    const child = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const outputClosed = Promise.all(
      [child.stdout!, child.stderr!].map((stream) => new Promise<void>((resolve) => stream.once('close', resolve))),
    ).then(() => undefined);
    return { child, mark, output: () => output, outputClosed };
  }

  async function running(started: Started): Promise<void> {
    await waitFor(
      'npm start to be up',
      async () =>
        started.output().includes('Flash sale is running')
          ? 'up'
          : started.child.exitCode === null
            ? 'starting'
            : 'exited',
      (state) => state !== 'starting',
      240_000,
    );
    if (!started.output().includes('Flash sale is running'))
      throw new Error(`npm start did not come up:\n${started.output()}`);
  }

  /** Resolves with how the launcher exited: its code, or the signal that ended it. */
  function exitOf(child: ChildProcess): Promise<number | string> {
    return new Promise((resolve) =>
      child.exitCode !== null || child.signalCode !== null
        ? resolve(child.exitCode ?? child.signalCode!)
        : child.once('exit', (code, signal) => resolve(code ?? signal!)),
    );
  }

  /** The processes a start left behind: `npm start`'s whole offspring, found by the mark it passed down. */
  const leftBehind = (started: Started) =>
    processesWithEnv(MARK, started.mark).map((entry) => `${entry.pid} ${entry.args}`);

  /**
   * Once the launcher has exited, nothing may be left — at once: start.mjs exits only after all it
   * started has. The one exception is npm killed by a SIGHUP it does not forward: npm is gone first,
   * and start.mjs, orphaned, needs a moment to notice and stop.
   */
  async function leftBehindOnceStopped(started: Started, orphaned: boolean): Promise<string[]> {
    if (!orphaned) return leftBehind(started);
    return waitFor(
      'the orphaned start to stop all',
      async () => leftBehind(started),
      (left) => left.length === 0,
      60_000,
    ).catch(() => leftBehind(started));
  }

  it.each([
    // npm forwards SIGINT and SIGTERM to the script it runs: with `exec`, that is start.mjs itself.
    ['npm start', 'SIGINT', 0],
    ['npm start', 'SIGTERM', 0],
    // npm neither handles nor forwards SIGHUP: npm dies of it, and start.mjs sees itself orphaned.
    ['npm start', 'SIGHUP', 'SIGHUP'],
    ['node scripts/start.mjs', 'SIGTERM', 0],
    ['node scripts/start.mjs', 'SIGHUP', 0],
  ] as const)(
    '%s, sent %s alone: exits (%s), leaving no process',
    async (how, signal, exit) => {
      const started = await launch(how);
      await running(started);
      // The storefront was current: a start rebuilds nothing.
      expect(started.output()).toContain('storefront: unchanged since its last build, not rebuilt');
      expect(started.output()).not.toContain('building the storefront');
      const before = processesWithEnv(MARK, started.mark).map((entry) => entry.args);
      for (const app of ['scripts/start.mjs', 'apps/api/dist/main.js', 'apps/worker/dist/main.js']) {
        expect(before.some((args) => args.includes(app))).toBe(true);
      }

      const exited = exitOf(started.child);
      process.kill(started.child.pid!, signal);
      expect(await exited).toBe(exit);
      expect(await leftBehindOnceStopped(started, exit === 'SIGHUP')).toEqual([]);
      await closeWithin(30_000, started.outputClosed);
      expect(started.output()).toMatch(/\[start\] stopped/);
    },
    300_000,
  );

  it('signalled during a setup step (the build), it ends the step too, leaving no process', async () => {
    const started = await launch('node scripts/start.mjs');
    // The line is printed as the step starts, in the same turn of start.mjs's event loop: by the time
    // it handles the signal, the step's process exists.
    await waitFor(
      'the build step to start',
      async () => started.output(),
      (output) => output.includes('building the API and the worker (tsc -b)') || started.child.exitCode !== null,
      120_000,
    );
    const exited = exitOf(started.child);
    process.kill(started.child.pid!, 'SIGTERM');
    expect(await exited).toBe(0);
    expect(leftBehind(started)).toEqual([]); // the build step's process included
    expect(started.output()).not.toContain('Flash sale is running');
    expect(started.output()).not.toMatch(/failed/);
  }, 300_000);
});
