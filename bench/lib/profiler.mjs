/**
 * CPU profiles of the API and the worker (BENCH_CPU_PROF=1), of exactly the measured windows.
 *
 * `--cpu-prof` writes only on a normal exit, and the API re-raises SIGTERM after its shutdown hooks,
 * so it would never write; and Nest's shutdown hooks also stop the app on SIGUSR2. Instead a preload
 * module (generated into TMP; no app code changes) runs the V8 profiler between two messages on an
 * IPC channel.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from './app-dist.mjs';
import { round } from './format.mjs';
import { askChild } from './process-probes.mjs';
import { RUN_ID, SETTINGS, TMP, log } from './settings.mjs';

/** Where the preload in the API or the worker writes its profile (its env BENCH_CPU_PROFILE_PATH). */
const profilePath = (app) => path.join(TMP, `${app}.cpuprofile`);

/** startChild options for a child that may be profiled: the preload and its IPC channel, if profiling. */
export function profiledChildOptions(app) {
  const env = { BENCH_CPU_PROFILE_PATH: profilePath(app) };
  if (!SETTINGS.cpuProfile) return { env };
  return {
    env,
    nodeArgs: ['--require', writeProfilerPreload()],
    ipc: true,
  };
}

function writeProfilerPreload() {
  const file = path.join(TMP, 'cpu-profile-preload.cjs');
  writeFileSync(
    file,
    `const inspector = require('node:inspector');
const fs = require('node:fs');
const session = new inspector.Session();
session.connect();
process.channel?.unref(); // the channel must not keep the process alive
process.on('message', (message) => {
  if (message === 'cpu-profile:start') {
    // Every allocation is sampled, also those a collection has freed since: where the bytes go.
    const sampling = { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true };
    session.post('HeapProfiler.enable', () =>
      session.post('HeapProfiler.startSampling', sampling, () =>
        session.post('Profiler.enable', () => session.post('Profiler.start', () => process.send('cpu-profile:started'))),
      ),
    );
  } else if (message === 'cpu-profile:stop') {
    session.post('Profiler.stop', (error, result) => {
      fs.writeFileSync(process.env.BENCH_CPU_PROFILE_PATH, JSON.stringify(error ? { error: String(error) } : result.profile));
      session.post('HeapProfiler.stopSampling', (heapError, heap) => {
        fs.writeFileSync(process.env.BENCH_CPU_PROFILE_PATH + '.heap', JSON.stringify(heapError ? { error: String(heapError) } : heap.profile));
        process.send('cpu-profile:written');
      });
    });
  }
});
`,
  );
  return file;
}

/** Starts profiling `child` (when BENCH_CPU_PROF=1). */
export async function startProfile(child) {
  if (SETTINGS.cpuProfile) await profilerCommand(child, 'cpu-profile:start', 'cpu-profile:started');
}

/** Stops profiling `child` (`app`: 'api' or 'worker') and appends its analysis to `profiles` (when BENCH_CPU_PROF=1). */
export async function stopProfile(child, app, profiles, name, title) {
  if (!SETTINGS.cpuProfile) return;
  await profilerCommand(child, 'cpu-profile:stop', 'cpu-profile:written');
  profiles.push(await readProfile(profilePath(app), name, title));
}

/** Sends a command to the profiler preload and waits for its answer. */
function profilerCommand(child, command, answer) {
  return askChild(child, command, (message) => message === answer);
}

async function readProfile(file, name, title) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  if (profile.error) throw new Error(`CPU profile failed: ${profile.error}`);
  const heap = JSON.parse(readFileSync(`${file}.heap`, 'utf8'));
  if (heap.error) throw new Error(`heap sampling failed: ${heap.error}`);
  // Outside TMP (deleted at the end) and outside bench/results (not something to commit).
  const kept = path.join(os.tmpdir(), `flash-sale-bench-${RUN_ID}-${name}.cpuprofile`);
  writeFileSync(kept, JSON.stringify(profile));
  const keptHeap = path.join(os.tmpdir(), `flash-sale-bench-${RUN_ID}-${name}.heapprofile`);
  writeFileSync(keptHeap, JSON.stringify(heap));
  const analysis = {
    name,
    title,
    ...analyzeProfile(profile),
    allocationsTop: analyzeHeapProfile(heap),
    file: kept,
    heapFile: keptHeap,
  };
  log(`${title}: written to ${analysis.file} and ${analysis.heapFile} (open them in Chrome DevTools)`);
  return analysis;
}

/**
 * Where the sampled allocations were made: bytes by the allocating function, and by package (the
 * function's own file, or for a frame in Node's core, the first caller outside it).
 */
function analyzeHeapProfile(heap) {
  const byFrame = new Map();
  const byPackage = new Map();
  let total = 0;
  const add = (map, key, bytes) => map.set(key, (map.get(key) ?? 0) + bytes);
  const visit = (node, owner) => {
    const pkg = packageOf(node.callFrame);
    const ownPackage = UNINFORMATIVE_PACKAGES.has(pkg) ? owner : pkg;
    if (node.selfSize > 0) {
      total += node.selfSize;
      add(byFrame, frameName(node.callFrame), node.selfSize);
      add(byPackage, ownPackage ?? pkg, node.selfSize);
    }
    for (const child of node.children ?? []) visit(child, ownPackage);
  };
  visit(heap.head, undefined);
  const top = (map, n) =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([frame, bytes]) => ({ name: frame, percent: round((bytes / total) * 100, 1) }));
  return { byFunction: top(byFrame, 15), byPackage: top(byPackage, 12) };
}

const frameName = ({ functionName, url, lineNumber }) => {
  const file = url.replace(/^file:\/\//, '').replace(`${ROOT}/`, '');
  return `${functionName || '(anonymous)'}${file ? ` ${file}:${lineNumber + 1}` : ''}`;
};

const packageOf = ({ url, functionName }) => {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  const match = url.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/);
  if (match) return match[1];
  if (url.startsWith('node:')) return 'node (core)';
  if (/\/(apps|libs)\//.test(url)) return 'app (apps/, libs/)';
  return url;
};

/** Nearly every sample has Node's own frames (microtask queue, timers) at its root: not informative. */
const UNINFORMATIVE_PACKAGES = new Set(['(root)', '(native)', 'node (core)']);

/** Top frames by self time, and the share of samples in which each package is on the stack. */
function analyzeProfile(profile) {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parentOf = new Map();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
  const packagesOnStack = packagesOnStackOf(nodes, parentOf);
  const selfByFrame = new Map();
  const inclusiveByPackage = new Map();
  const add = (map, key, delta) => map.set(key, (map.get(key) ?? 0) + delta);
  let total = 0;
  let idle = 0;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    const { callFrame } = nodes.get(id);
    if (callFrame.functionName === '(idle)') {
      idle += delta;
      return;
    }
    total += delta;
    let key = frameName(callFrame);
    // A native frame (no URL, e.g. OpenSSL's `init`) says little alone: name its JavaScript caller.
    if (!callFrame.url && !callFrame.functionName.startsWith('(') && parentOf.has(id)) {
      key = `${key} (native) ← ${frameName(nodes.get(parentOf.get(id)).callFrame)}`;
    }
    add(selfByFrame, key, delta);
    for (const pkg of packagesOnStack(id)) add(inclusiveByPackage, pkg, delta);
  });
  const top = (map, n) =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([name, us]) => ({ name, percent: round((us / total) * 100, 1), ms: round(us / 1000, 0) }));
  return {
    busyMs: round(total / 1000, 0),
    idleMs: round(idle / 1000, 0),
    topSelf: top(selfByFrame, 15),
    packagesInclusive: top(inclusiveByPackage, 18).filter((row) => !UNINFORMATIVE_PACKAGES.has(row.name)),
  };
}

/** The packages on the stack of a profile node, memoised (stacks share their roots). */
function packagesOnStackOf(nodes, parentOf) {
  const memo = new Map();
  const packagesOnStack = (id) => {
    let set = memo.get(id);
    if (set) return set;
    const parent = parentOf.get(id);
    set = new Set(parent === undefined ? [] : packagesOnStack(parent));
    set.add(packageOf(nodes.get(id).callFrame));
    memo.set(id, set);
    return set;
  };
  return packagesOnStack;
}
