/**
 * Probes in the API and the ceiling server, through a small preload (no app code changes) and an IPC
 * channel:
 * - **the heap meter**: bytes the process allocates on the JavaScript heap during a measured window,
 *   and what its garbage collection cost meanwhile. V8 keeps no running total of allocations, so the
 *   preload runs `v8.GCProfiler` between two messages: what each collection found in use, less what the
 *   one before left, is what was allocated in between (plus the growth since the last one at the end).
 * - **the speed probe**: a fixed piece of work timed inside the process, against the same work timed in
 *   the bench's own process. A virtual machine can give a process half a core's speed for its whole
 *   life; a target judged on such a process says nothing about the build (`ensureFullSpeed`).
 */
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { round } from './format.mjs';
import { TMP, log } from './settings.mjs';

/**
 * The speed probe, the same source run in the child and here: integer arithmetic and a hash, a few
 * milliseconds, seven times; the best time (ms) is its answer, so a moment of preemption does not count.
 */
const SPEED_PROBE = `
  let best = Infinity;
  for (let run = 0; run < 7; run++) {
    const startedAt = performance.now();
    let x = 0;
    for (let i = 0; i < 2000000; i++) x = (Math.imul(x, 31) + i) | 0;
    const hash = require('node:crypto').createHash('sha256');
    for (let i = 0; i < 2000; i++) hash.update('flash-sale speed probe ' + i + x);
    hash.digest();
    best = Math.min(best, performance.now() - startedAt);
  }
  return best;
`;
/** The speed probe as a function of (require, performance). */
const speedProbe = () => new Function('require', 'performance', SPEED_PROBE);
const require = createRequire(import.meta.url);
/** A process this much slower than the bench's own at the same work is running at part speed. */
const SLOW_PROCESS_RATIO = 1.5;

/** `options` for startChild, plus the probes (they share the IPC channel with the profiler's preload). */
export function withProbes(options) {
  return { ...options, nodeArgs: [...(options.nodeArgs ?? []), '--require', writeProbesPreload()], ipc: true };
}

function writeProbesPreload() {
  const file = path.join(TMP, 'process-probes-preload.cjs');
  writeFileSync(
    file,
    `const v8 = require('node:v8');
const { performance } = require('node:perf_hooks');
process.channel?.unref(); // the channel must not keep the process alive
let profiler;
let usedAtStart = 0;
const speedProbe = new Function('require', 'performance', ${JSON.stringify(SPEED_PROBE)});
process.on('message', (message) => {
  if (message === 'heap-meter:start') {
    profiler = new v8.GCProfiler();
    profiler.start();
    usedAtStart = v8.getHeapStatistics().used_heap_size;
    process.send('heap-meter:started');
  } else if (message === 'heap-meter:stop' && profiler) {
    const { statistics } = profiler.stop();
    profiler = undefined;
    let allocated = 0;
    let usedAfterLast = usedAtStart;
    let gcMicros = 0;
    for (const gc of statistics) {
      allocated += Math.max(0, gc.beforeGC.heapStatistics.usedHeapSize - usedAfterLast);
      usedAfterLast = gc.afterGC.heapStatistics.usedHeapSize;
      gcMicros += gc.cost;
    }
    allocated += Math.max(0, v8.getHeapStatistics().used_heap_size - usedAfterLast);
    process.send({ heapMeter: { allocatedBytes: allocated, collections: statistics.length, gcMicros } });
  } else if (message === 'speed-probe') {
    process.send({ speedProbeMs: speedProbe(require, performance) });
  }
});
`,
  );
  return file;
}

/** Starts metering `child` (one started withProbes); `stop()` gives what it allocated. */
export async function startHeapMeter(child) {
  await askChild(child, 'heap-meter:start', (message) => message === 'heap-meter:started');
  return {
    stop: async () => (await askChild(child, 'heap-meter:stop', (message) => message?.heapMeter)).heapMeter,
  };
}

/** The speed probe's best time in `child`, over its best time in this process. */
async function speedRatio(child) {
  const ownBestMs = speedProbe()(require, performance);
  const { speedProbeMs } = await askChild(child, 'speed-probe', (message) => message?.speedProbeMs !== undefined);
  return round(speedProbeMs / ownBestMs, 2);
}

/**
 * Before a section measures `name`'s process: its speed against the bench's own. A slow one is replaced
 * once (`restart()` returns the new child) and probed again; one still slow is flagged in the results
 * (`calibration`), and the report's header says its targets are not the build's.
 */
export async function ensureFullSpeed(run, name, child, restart) {
  let ratio = await speedRatio(child);
  const calibration = { process: name, ratios: [ratio], restarted: false, slow: false };
  if (ratio > SLOW_PROCESS_RATIO) {
    log(`${name} runs the speed probe ${ratio}× slower than the bench's own process: restarting it`);
    const fresh = await restart();
    calibration.restarted = true;
    ratio = await speedRatio(fresh);
    calibration.ratios.push(ratio);
    calibration.slow = ratio > SLOW_PROCESS_RATIO;
    if (calibration.slow) log(`WARNING ${name} is still ${ratio}× slower after a restart: its targets are flagged`);
  }
  log(`speed probe: ${name} ${calibration.ratios.map((r) => `${r}×`).join(', then ')} the bench's own time`);
  run.results.calibration ??= [];
  run.results.calibration.push(calibration);
  return calibration;
}

/**
 * Sends `command` to a child's preload (these probes', or the profiler's) over its IPC channel; the first
 * message `isAnswer` accepts, within 30 s.
 */
export function askChild(child, command, isAnswer) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer to ${command} from pid ${child.pid}`)), 30_000);
    const onMessage = (message) => {
      if (!isAnswer(message)) return;
      clearTimeout(timer);
      child.off('message', onMessage);
      resolve(message);
    };
    child.on('message', onMessage);
    child.send(command);
  });
}
