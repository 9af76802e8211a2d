/**
 * `npm start`'s first step: the dependencies installed when they are missing or older than the lockfile.
 * Node built-ins only (it runs before `npm install`).
 */
import { existsSync, statSync, utimesSync } from 'node:fs';
import path from 'node:path';

/**
 * `npm install` on a fresh clone or when the lockfile changed since the last install. `--no-save`:
 * npm must not rewrite the committed package-lock.json (it already lists every platform's optional
 * native packages), so a start leaves the clone as it found it.
 */
export async function installDependencies(root, { log, runStep, npm }) {
  const lockfile = path.join(root, 'package-lock.json');
  const modules = path.join(root, 'node_modules');
  let reason;
  if (!existsSync(modules)) reason = 'node_modules is missing';
  else if (existsSync(lockfile) && statSync(lockfile).mtimeMs > installedAt(modules))
    reason = 'package-lock.json is newer than node_modules';
  else return;
  log(`${reason}: installing dependencies (a minute or two on a fresh clone)`);
  await runStep('npm install', 'install', npm, ['install', '--no-save', '--no-audit', '--no-fund']);
  // npm may touch package-lock.json's mtime after node_modules; mark the install as the newer one.
  const now = new Date();
  utimesSync(modules, now, now);
}

/** npm writes node_modules/.package-lock.json on every install; the directory's own mtime is the fallback. */
function installedAt(modules) {
  const hidden = path.join(modules, '.package-lock.json');
  return Math.max(statSync(modules).mtimeMs, existsSync(hidden) ? statSync(hidden).mtimeMs : 0);
}
