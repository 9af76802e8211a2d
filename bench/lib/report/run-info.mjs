/** What a result was measured on: the machine, and which build of the app. */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from '../app-dist.mjs';
import { round } from '../format.mjs';

export function machineInfo() {
  const cpus = os.cpus();
  return {
    cpuModel: cpus[0]?.model ?? 'unknown',
    cpuCount: cpus.length,
    totalMemoryGiB: round(os.totalmem() / 2 ** 30, 1),
    node: process.version,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    loadAverageAtStart: os.loadavg().map((value) => round(value, 2)),
  };
}

/** What was measured: HEAD, and when dist was last built (another commit may sit in src, unbuilt). */
export function appInfo() {
  const git = (...args) => spawnSync('git', args, { cwd: ROOT, encoding: 'utf8' }).stdout?.trim() ?? '';
  const dirty = git('status', '--porcelain', '--', 'apps', 'libs');
  const newest = newestBuiltFileMs();
  return {
    commit: git('rev-parse', '--short', 'HEAD'),
    commitSubject: git('log', '-1', '--format=%s'),
    uncommittedAppFiles: dirty ? dirty.split('\n').length : 0,
    distBuiltAt: newest ? new Date(newest).toISOString() : null,
  };
}

/** The newest modification time of a .js file in any project's dist. */
function newestBuiltFileMs() {
  let newest = 0;
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.js')) newest = Math.max(newest, statSync(full).mtimeMs);
    }
  };
  for (const base of ['apps', 'libs']) {
    for (const project of readdirSync(path.join(ROOT, base))) {
      const dist = path.join(ROOT, base, project, 'dist');
      if (existsSync(dist)) walk(dist);
    }
  }
  return newest;
}
