/**
 * The end of a run: every figure as a ratio to the ceiling's, the targets, the noise, and
 * bench/results/latest.{json,md,svg} (+ .png).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ratio, round } from '../format.mjs';
import { NOISY_OTHER_PERCENT, RESULTS_DIR, SETTINGS, log } from '../settings.mjs';
import { renderChart, writePng } from './chart.mjs';
import { ROOT } from '../app-dist.mjs';
import { writeFigureFiles } from './figure-files.mjs';
import { renderMarkdown } from './markdown.mjs';
import { createSaleTargets } from './create-sale.mjs';
import { openingTargets } from './opening.mjs';
import { scaleTargets } from './scale.mjs';
import { perAcceptedPurchase } from '../sampling.mjs';
import { evaluateTargets, targetVerdict } from './targets.mjs';

/** Writes the report; returns the exit code (1 when a check failed; targets do not count). */
export async function writeReport(results) {
  addRatios(results);
  results.targets = [
    ...evaluateTargets(results),
    ...createSaleTargets(results),
    ...openingTargets(results),
    ...scaleTargets(results),
  ];
  results.noise = noise(results);
  if (results.noise.noisy)
    log(`WARNING: other processes used up to ${results.noise.otherProcessesPercentOfOneCore.max}% of a core meanwhile`);
  for (const t of results.targets) log(`target ${targetVerdict(t)}: ${t.name} — ${t.measured}`);

  results.finishedAt = new Date().toISOString();
  mkdirSync(RESULTS_DIR, { recursive: true });
  const chart = renderChart(results);
  writeFileSync(path.join(RESULTS_DIR, 'latest.svg'), chart.svg);
  results.chart = { svg: 'latest.svg', png: writePng(path.join(RESULTS_DIR, 'latest.svg'), chart) };
  const markdown = renderMarkdown(results);
  console.log(`\n${markdown}`);
  writeFileSync(path.join(RESULTS_DIR, 'latest.json'), `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(path.join(RESULTS_DIR, 'latest.md'), markdown);
  log(`wrote bench/results/latest.{json,md,svg}${results.chart.png ? ' and latest.png' : ''}`);
  // The figures the README and docs/performance.md show are this run's (their test holds them to latest.json).
  for (const file of await writeFigureFiles(ROOT, results)) log(`wrote this run's figures into ${file}`);
  return results.checks.every((c) => c.pass) ? 0 : 1;
}

/** Every row against the ceiling, and the live sale's costs per accepted purchase. */
function addRatios(results) {
  const ceilingRun = results.scenarios.find((s) => s.key === 'ceiling');
  const live = results.scenarios.find((s) => s.key === 'live');
  const soldOut = results.scenarios.find((s) => s.key === 'soldOut');
  const ceilingRedisUs = ceilingRun.redisCommands.usecPerResponse;
  const ceilingMachineCpuUs = ceilingRun.cpuUsPerResponse.machine;
  for (const row of [...results.scenarios, ...results.strategies]) {
    row.vsCeiling = ratio(row.reqPerSec, ceilingRun.reqPerSec);
    row.redisVsCeiling = ratio(row.redisCommands.usecPerResponse, ceilingRedisUs);
    row.machineCpuVsCeiling = ratio(row.cpuUsPerResponse.machine, ceilingMachineCpuUs);
  }
  results.ceilingReqPerSec = ceilingRun.reqPerSec;
  results.livePerAcceptedPurchase = perAcceptedPurchase(live);
  results.liveServerHeap = live.serverHeap;
  results.ceilingServerHeap = ceilingRun.serverHeap;
  results.ceilingPerAnswer = {
    redisUs: ceilingRedisUs,
    machineCpuUs: ceilingMachineCpuUs,
    serverCpuUs: ceilingRun.cpuUsPerResponse.ceiling,
    allocatedKb: ceilingRun.serverHeap?.kbPerResponse,
    redisCommands: ceilingRun.redisCommands.callsPerResponse,
  };
  results.ratios = {
    liveVsCeiling: live.vsCeiling,
    soldOutVsCeiling: soldOut.vsCeiling,
    soldOutMachineCpuVsCeiling: soldOut.machineCpuVsCeiling,
    liveP99VsCeiling: ratio(live.latencyMs.p99, ceilingRun.latencyMs.p99),
    liveRedisVsCeiling: ratio(results.livePerAcceptedPurchase.redisUs, ceilingRedisUs),
    liveMachineCpuVsCeiling: ratio(results.livePerAcceptedPurchase.machineCpuUs, ceilingMachineCpuUs),
    liveApiCpuVsCeilingServer: ratio(results.livePerAcceptedPurchase.apiCpuUs, ceilingRun.cpuUsPerResponse.ceiling),
    drainVsBaseline: ratio(results.drain.ordersPerSec, SETTINGS.drainBaseline),
  };
}

/** CPU that none of our processes used (another test run on the machine, the kernel): the noise. */
function noise(results) {
  const scaleRows = [
    ...(results.scale?.processes.rows ?? []),
    ...(results.scale?.cluster.rows.filter((row) => !row.refused) ?? []),
    ...(results.scale?.durableAck?.rows ?? []),
  ];
  const other = [...results.scenarios, ...results.strategies, results.drain, results.idle, ...scaleRows]
    .map((s) => s.cpu.otherProcesses)
    .filter((value) => typeof value === 'number');
  return {
    otherProcessesPercentOfOneCore: {
      mean: other.length ? round(other.reduce((a, b) => a + b, 0) / other.length, 0) : null,
      max: other.length ? Math.max(...other) : null,
    },
    noisy: other.some((value) => value > NOISY_OTHER_PERCENT),
  };
}
