#!/usr/bin/env node
// `node scripts/build-storefront.mjs`: builds the storefront (apps/web) with Vite unless its build is
// already that of its current sources (scripts/lib/storefront-build.mjs), and records what it built
// from. `npm test` builds it this way, as `npm start` does, so neither rebuilds what the other built.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { recordStorefrontBuild, storefrontBuildState } from './lib/storefront-build.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const state = storefrontBuildState(ROOT);
if (state.upToDate) {
  console.log(`storefront: ${state.reason}, not rebuilt`);
  process.exit(0);
}
console.log(`storefront: ${state.reason}, building`);
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const result = spawnSync(npm, ['run', '--silent', 'build', '-w', '@flash-sale/web'], {
  cwd: ROOT,
  stdio: 'inherit',
  shell: process.platform === 'win32',
});
if (result.status !== 0) process.exit(result.status ?? 1);
recordStorefrontBuild(ROOT, state.digest);
