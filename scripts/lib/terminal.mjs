/**
 * What `npm start` shows in the terminal, and what it keeps in files instead. Node built-ins only: it
 * runs before `npm install`.
 *
 * Two formats (LOG_FORMAT):
 *   - `pretty` (the default, for a person): one line per step, a progress line while a long step runs,
 *     and of the apps' logs only warnings and errors, one readable line each. Everything the apps and
 *     the steps write goes to `.data/logs/<name>.log` in full (the apps' lines as JSON, request ids
 *     included), where `tail -f` or `grep` finds it.
 *   - `json` (for machines): the apps' JSON lines pass through unchanged, and this script's own
 *     messages are JSON lines too, with `service: "start"`.
 */
import { spawn } from 'node:child_process';
import { appendFileSync, createWriteStream, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { clearInterval, setInterval } from 'node:timers';
import { killOnExit, terminate } from './processes.mjs';

/** pino's numeric levels, for lines that carry a number rather than a label. */
const LEVEL_NAMES = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };
const SHOWN_LEVELS = new Set(['warn', 'error', 'fatal']);
/** How often a non-interactive terminal (CI, a pipe) hears that a long step is still running. */
const PROGRESS_EVERY_MS = 15_000;
/** A failed step shows this many of its last output lines; the whole output is in its log file. */
const FAILURE_TAIL_LINES = 40;

export function createTerminal({ format, logDir, out = process.stdout, err = process.stderr }) {
  mkdirSync(logDir, { recursive: true });
  const json = format === 'json';
  const logFile = (name) => path.join(logDir, `${name}.log`);
  const shortLog = (name) => path.relative(process.cwd(), logFile(name));

  /** The steps running now, each `{ child, exited }`: stopSteps() ends them. */
  const runningSteps = new Set();

  const line = (stream, level, message) =>
    stream.write(
      json
        ? JSON.stringify({ level, time: new Date().toISOString(), service: 'start', msg: message }) + '\n'
        : `[start] ${message}\n`,
    );

  return {
    format,
    logFile,
    shortLog,
    say: (message) => line(out, 'info', message),
    warn: (message) => line(err, 'warn', message),
    error: (message) => line(err, 'error', message),
    /** The closing summary: plain text in both formats (a machine reads the JSON lines, not this). */
    banner: (text) => out.write(text),

    /**
     * Runs one setup step (install, build, migrate) with its output in `.data/logs/<logName>.log`, and a
     * progress line while it runs. On failure, the last lines of its output are shown and it throws.
     */
    async step(label, logName, command, args, { env = process.env } = {}) {
      const file = logFile(logName);
      appendFileSync(file, `\n=== ${new Date().toISOString()} ${command} ${args.join(' ')}\n`);
      const startedAt = Date.now();
      const progress = startProgress(out, json, label, startedAt, (message) => line(out, 'info', message));
      const log = createWriteStream(file, { flags: 'a' });
      // In a process group of its own, like the apps: a step may be a launcher (`npm run build` → vite),
      // and stopSteps() must end the whole of it, not leave its children behind.
      const child = spawn(command, args, {
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
        shell: process.platform === 'win32',
        detached: process.platform !== 'win32',
      });
      const step = { child, exited: new Promise((resolve) => child.once('exit', resolve)) };
      runningSteps.add(step);
      killOnExit.add(child);
      child.stdout.pipe(log, { end: false });
      child.stderr.pipe(log, { end: false });
      const result = await new Promise((resolve) => {
        child.once('error', (error) => resolve({ code: null, error }));
        child.once('close', (code, signal) => resolve({ code, signal }));
      });
      runningSteps.delete(step);
      killOnExit.delete(child);
      await new Promise((resolve) => log.end(resolve));
      const seconds = ((Date.now() - startedAt) / 1000).toFixed(1);
      progress.stop();
      if (result.code === 0) {
        line(out, 'info', `${label}: done in ${seconds} s`);
        return;
      }
      const tail = readFileSync(file, 'utf8').trimEnd().split('\n').slice(-FAILURE_TAIL_LINES).join('\n');
      err.write(`${tail}\n`);
      throw new Error(
        `${label} failed (${result.error?.message ?? `exit ${result.code ?? result.signal}`}); full output in ${shortLog(logName)}`,
      );
    },

    /** Ends the steps still running (SIGTERM to each one's process group, SIGKILL after `graceMs`). */
    async stopSteps(graceMs) {
      await Promise.all([...runningSteps].map(({ child, exited }) => terminate(child, exited, graceMs)));
    },

    /**
     * An app's stdout and stderr: every line to its log file; to the terminal, every line in `json`
     * format, and in `pretty` format the warnings and errors (and any line that is not JSON, such as a
     * crash's stack trace), one readable line each.
     */
    followApp(name, child) {
      const file = createWriteStream(logFile(name), { flags: 'a' });
      for (const [input, output] of [
        [child.stdout, out],
        [child.stderr, err],
      ]) {
        readline.createInterface({ input, crlfDelay: Infinity }).on('line', (text) => {
          file.write(text + '\n');
          if (json) return output.write(text + '\n');
          const shown = readableProblem(name, text);
          if (shown) output.write(shown + '\n');
        });
      }
      child.once('exit', () => file.end());
    },
  };
}

/**
 * The terminal's line for one line an app wrote: null for a routine JSON entry (info and below: access
 * lines, boot messages), a short readable line for a warning or an error, the line as it is otherwise.
 */
export function readableProblem(name, text) {
  let entry;
  try {
    entry = JSON.parse(text);
  } catch {
    return text.trim() === '' ? null : `[${name}] ${text}`;
  }
  if (entry === null || typeof entry !== 'object') return `[${name}] ${text}`;
  const level = typeof entry.level === 'number' ? LEVEL_NAMES[entry.level] : entry.level;
  if (!SHOWN_LEVELS.has(level)) return null;
  const parts = [`[${name}] ${String(level).toUpperCase()}`];
  if (entry.context) parts.push(`${entry.context}:`);
  parts.push(entry.msg ?? '');
  if (entry.req?.method) parts.push(`(${entry.req.method} ${entry.req.url} → ${entry.res?.statusCode ?? '?'})`);
  const errorText = entry.err?.message ?? entry.err?.type;
  if (errorText && !String(entry.msg ?? '').includes(errorText)) parts.push(`— ${errorText}`);
  if (entry.reqId) parts.push(`[reqId ${entry.reqId}]`);
  return parts.join(' ');
}

/** On a terminal: one line rewritten in place every second. Elsewhere: a line every PROGRESS_EVERY_MS. */
function startProgress(out, json, label, startedAt, say) {
  const elapsed = () => Math.round((Date.now() - startedAt) / 1000);
  if (out.isTTY && !json) {
    const draw = () => out.write(`\r[start] ${label} … ${elapsed()} s `);
    draw();
    const timer = setInterval(draw, 1_000);
    return {
      stop: () => {
        clearInterval(timer);
        out.write('\r\x1b[2K');
      },
    };
  }
  say(`${label} …`);
  const timer = setInterval(() => say(`${label}: still running (${elapsed()} s)`), PROGRESS_EVERY_MS);
  return { stop: () => clearInterval(timer) };
}
