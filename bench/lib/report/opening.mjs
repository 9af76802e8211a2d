/**
 * The opening section of the report (lib/scenarios/opening.mjs): the cold burst beside the warm one, the
 * whole short sale beside the steady state, per API process count. Also its own report when the section
 * runs alone (`--only opening`): bench/results/opening.{md,json}.
 */
import { thousands, times } from '../format.mjs';
import { writeSectionReport } from './section-report.mjs';

export const OPENING_TARGETS = {
  /** The cold burst's req/s ≥ this × the same burst warm. */
  coldReqPerSecVsWarm: 0.8,
  /** The cold burst's p99 ≤ this × the warm one's. */
  coldP99VsWarm: 2,
  /** A whole short sale from a fresh start: machine CPU per purchase ≤ this × the steady state's. */
  shortSaleCpuVsSteady: 1.2,
};

const processesLabel = (n) => `${n} API process${n === 1 ? '' : 'es'}`;

export function openingTargets(r) {
  const opening = r.opening;
  if (!opening) return [];
  const chosen = opening.configurations.find((c) => c.isDefault);
  // A whole sale is the measure: the short burst leaves the machine half idle, which favours more processes
  // compiling in parallel over what a crowd that saturates the cores gets.
  const fastest = [...opening.configurations].sort((a, b) => b.shortSale.reqPerSec - a.shortSale.reqPerSec)[0];
  const cheapest = [...opening.configurations].sort(
    (a, b) => a.shortSale.perAccepted.machineCpuUs - b.shortSale.perAccepted.machineCpuUs,
  )[0];
  const withDefault = `with the default of ${processesLabel(chosen.processes)}`;
  return [
    {
      id: 'openingColdReqPerSec',
      name: `cold opening burst ≥ ${times(OPENING_TARGETS.coldReqPerSecVsWarm)} the same burst warm (req/s), ${withDefault}`,
      measured: `${thousands(chosen.cold.reqPerSec)} vs ${thousands(chosen.warm.reqPerSec)} req/s = ${times(chosen.coldVsWarm.reqPerSec)}`,
      value: chosen.coldVsWarm.reqPerSec,
      pass: chosen.coldVsWarm.reqPerSec >= OPENING_TARGETS.coldReqPerSecVsWarm,
    },
    {
      id: 'openingColdP99',
      name: `cold opening burst p99 ≤ ${times(OPENING_TARGETS.coldP99VsWarm)} the warm p99, ${withDefault}`,
      measured: `${chosen.cold.latencyMs.p99} vs ${chosen.warm.latencyMs.p99} ms = ${times(chosen.coldVsWarm.p99)}`,
      value: chosen.coldVsWarm.p99,
      pass: chosen.coldVsWarm.p99 <= OPENING_TARGETS.coldP99VsWarm,
    },
    {
      id: 'shortSaleCpuVsSteady',
      name:
        `whole short sale from a fresh start: machine CPU per purchase ≤ ${times(OPENING_TARGETS.shortSaleCpuVsSteady)} ` +
        `the steady state's, ${withDefault}`,
      measured:
        `${thousands(chosen.shortSale.perAccepted.machineCpuUs)} µs vs ` +
        `${thousands(chosen.steady.perAccepted.machineCpuUs)} µs = ${times(chosen.shortSaleVsSteady)}`,
      value: chosen.shortSaleVsSteady,
      pass: chosen.shortSaleVsSteady <= OPENING_TARGETS.shortSaleCpuVsSteady,
    },
    {
      id: 'openingDefaultFastest',
      name: 'the default number of API processes sold the whole short sale fastest and cheapest of those measured here',
      measured:
        `default ${processesLabel(chosen.processes)}; ` +
        opening.configurations
          .map(
            (c) =>
              `${processesLabel(c.processes)}: ${thousands(c.shortSale.reqPerSec)} purchases/s, ` +
              `${thousands(c.shortSale.perAccepted.machineCpuUs)} µs`,
          )
          .join('; '),
      value: chosen.processes,
      pass: fastest.processes === chosen.processes && cheapest.processes === chosen.processes,
    },
  ];
}

export function openingSection(r) {
  const opening = r.opening;
  if (!opening) return [];
  const { buyers, connections, stock, shortSale } = opening.settings;
  const burstRow = (c, when, s) =>
    `| ${processesLabel(c.processes)}${c.isDefault ? ' (default)' : ''} | ${when} | ${thousands(s.reqPerSec)} | ` +
    `${s.elapsedToLastResponseS} | ${s.latencyMs.p50} | ${s.latencyMs.p99} | ${s.latencyMs.max ?? ''} | ` +
    `${thousands(s.perAccepted.machineCpuUs)} | ${s.errors} |`;
  return [
    '## (h) the opening second: cold processes, as `npm start` leaves them',
    '',
    `**Opening burst** — fresh API and worker processes; as soon as \`/health/ready\` answers, a sale of ${stock} ` +
      `units is created and ${thousands(buyers)} distinct buyers hit it on ${connections} connections (the first ` +
      `purchase ${opening.configurations.map((c) => `${c.readyToFirstPurchaseMs} ms`).join(' / ')} after readiness). ` +
      'Then the same burst on a new sale, on the same processes, warm.',
    '',
    '| API processes | run | req/s | burst length (s) | p50 (ms) | p99 (ms) | max (ms) | machine CPU µs / accepted purchase, until written | errors |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|',
    ...opening.configurations.flatMap((c) => [burstRow(c, 'cold', c.cold), burstRow(c, 'warm', c.warm)]),
    '',
    ...opening.configurations.map(
      (c) =>
        `${processesLabel(c.processes)}: cold / warm req/s **${times(c.coldVsWarm.reqPerSec)}**, p99 ` +
        `**${times(c.coldVsWarm.p99)}**, machine CPU per purchase ${times(c.coldVsWarm.machineCpuPerPurchase)}.`,
    ),
    '',
    `**Whole short sale** — fresh processes again; ${thousands(shortSale.buyers)} buyers on ` +
      `${r.settings.connections} connections each buy one unit, until the worker has written every order; then ` +
      `on the same processes a ${r.settings.warmupS} s warm-up and ${r.settings.durationS} s of live purchases ` +
      '(the steady state), measured the same way.',
    '',
    '| API processes | short sale: purchases/s | p99 (ms) | machine CPU µs / purchase | steady state: purchases/s | machine CPU µs / purchase | short sale / steady |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...opening.configurations.map(
      (c) =>
        `| ${processesLabel(c.processes)}${c.isDefault ? ' (default)' : ''} | ${thousands(c.shortSale.reqPerSec)} | ` +
        `${c.shortSale.latencyMs.p99} | ${thousands(c.shortSale.perAccepted.machineCpuUs)} | ` +
        `${thousands(c.steady.reqPerSec)} | ${thousands(c.steady.perAccepted.machineCpuUs)} | **${times(c.shortSaleVsSteady)}** |`,
    ),
    '',
    `The default (API_INSTANCES unset) on this machine's ${opening.cores} cores is ` +
      `${processesLabel(opening.defaultProcesses)}: half the cores, since the worker, Redis and MariaDB share them ` +
      '(docs/performance.md, "How many API processes").',
    '',
  ];
}

/** `--only opening`: the section alone, printed and written to bench/results/opening.{md,json}. */
export function writeOpeningReport(results) {
  return writeSectionReport(results, {
    name: 'opening',
    title: 'opening section',
    targets: openingTargets,
    section: openingSection,
  });
}
