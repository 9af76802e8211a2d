/**
 * Whether the storefront's build (apps/web/dist) is still the build of its sources, so `npm start` and
 * `npm test` run `vite build` only when something it reads has changed. Node built-ins only: `npm start`
 * uses it before `npm install`.
 *
 * After a build, a stamp (`.data/storefront-build.json`) records a SHA-256 of every input — each file's
 * path and content — and of the built index.html, which names every hashed asset of the build. The
 * build is up to date while both still match: an edited, added or removed source (or config, or
 * dependency version) changes the first; a build made or removed by anything else changes the second.
 * Contents, not modification times: a checkout or a `touch` that changes nothing rebuilds nothing.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * What `vite build` of apps/web reads, relative to the repository root: the app itself (sources,
 * public files, index.html, its Vite, TypeScript and package config, any .env file), the contract's
 * sources it imports by alias, and the dependency versions.
 */
export const STOREFRONT_INPUTS = ['apps/web', 'libs/contract/src', 'package.json', 'package-lock.json'];
/** Directories under the inputs that are not inputs: installed packages and build output. */
const NOT_INPUTS = new Set(['node_modules', 'dist']);
export const STOREFRONT_OUTPUT = 'apps/web/dist/index.html';
export const STOREFRONT_STAMP = '.data/storefront-build.json';

/** SHA-256 over the inputs' relative paths and contents, in a fixed order. */
export function storefrontInputsDigest(root) {
  const hash = createHash('sha256');
  for (const file of STOREFRONT_INPUTS.flatMap((input) => filesUnder(root, input)).sort()) {
    const content = readFileSync(path.join(root, file));
    hash.update(`${file}\0${content.length}\0`);
    hash.update(content);
  }
  return hash.digest('hex');
}

/**
 * `{ upToDate, digest, reason }`: `digest` is the inputs' digest now (to record after a build);
 * `reason` says why a build is needed.
 */
export function storefrontBuildState(root) {
  const digest = storefrontInputsDigest(root);
  const output = path.join(root, STOREFRONT_OUTPUT);
  if (!existsSync(output)) return { upToDate: false, digest, reason: 'no build yet' };
  const stamp = readStamp(root);
  if (!stamp) return { upToDate: false, digest, reason: 'no record of what the build was made from' };
  if (stamp.inputs !== digest) return { upToDate: false, digest, reason: 'its sources changed' };
  if (stamp.output !== fileDigest(output)) return { upToDate: false, digest, reason: 'the build changed since' };
  return { upToDate: true, digest, reason: 'unchanged since its last build' };
}

/** After a successful build of the inputs whose digest was `digest`. */
export function recordStorefrontBuild(root, digest) {
  const stampFile = path.join(root, STOREFRONT_STAMP);
  mkdirSync(path.dirname(stampFile), { recursive: true });
  const stamp = { inputs: digest, output: fileDigest(path.join(root, STOREFRONT_OUTPUT)) };
  writeFileSync(stampFile, JSON.stringify(stamp, null, 2) + '\n');
}

function readStamp(root) {
  try {
    return JSON.parse(readFileSync(path.join(root, STOREFRONT_STAMP), 'utf8'));
  } catch {
    return null; // none yet, or unreadable: either way the build is not known to be current
  }
}

function fileDigest(file) {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

/** The files of `relative` (a file, or a directory walked in full), relative to `root`; none if missing. */
function filesUnder(root, relative) {
  const absolute = path.join(root, relative);
  if (!existsSync(absolute)) return [];
  const files = [];
  const walk = (dir) => {
    for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const child = path.posix.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (!NOT_INPUTS.has(entry.name)) walk(child);
      } else if (entry.isFile()) {
        files.push(child);
      }
    }
  };
  if (statSync(absolute).isDirectory()) walk(relative);
  else files.push(relative);
  return files;
}
