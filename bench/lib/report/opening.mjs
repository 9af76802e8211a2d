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
  /** The cold burst's connections: p99 of the time to open one (ms), at most. */
  coldConnectP99Ms: 50,
};

const processesLabel = (n) => `${n} API process${n === 1 ? '' : 'es'}`;

/** "×0.81 (rounds ×0.70, ×0.81, ×0.92)": the median the target judges, and every round's figure. */
function medianAndRounds(median, rounds, pick) {
  if (rounds.length === 1) return times(median);
  return `${times(median)} (median; rounds ${rounds.map((r) => times(pick(r))).join(', ')})`;
}

export function openingTargets(r) {
  const opening = r.opening;
  if (!opening) return [];
  const chosen = opening.configurations.find((c) => c.isDefault);
  // A whole sale is the measure: the short burst leaves the machine half idle, which favours more processes
  // compiling in parallel over what a crowd that saturates the cores gets.
  const fastest = [...opening.configurations].sort((a, b) => b.shortSale.reqPerSec - a.shortSale.reqPerSec)[0];
  const cheapest = [...opening.configurations].sort((a, b) => a.shortSale.machineCpuUs - b.shortSale.machineCpuUs)[0];
  const withDefault = `with the default of ${processesLabel(chosen.processes)}`;
  const { rounds } = chosen;
  return [
    {
      id: 'openingColdReqPerSec',
      name: `cold opening burst ≥ ${times(OPENING_TARGETS.coldReqPerSecVsWarm)} the same burst warm (req/s), ${withDefault}`,
      measured: medianAndRounds(chosen.coldVsWarm.reqPerSec, rounds, (round) => round.coldVsWarm.reqPerSec),
      value: chosen.coldVsWarm.reqPerSec,
      pass: chosen.coldVsWarm.reqPerSec >= OPENING_TARGETS.coldReqPerSecVsWarm,
    },
    {
      id: 'openingColdP99',
      name: `cold opening burst p99 ≤ ${times(OPENING_TARGETS.coldP99VsWarm)} the warm p99, ${withDefault}`,
      measured: medianAndRounds(chosen.coldVsWarm.p99, rounds, (round) => round.coldVsWarm.p99),
      value: chosen.coldVsWarm.p99,
      pass: chosen.coldVsWarm.p99 <= OPENING_TARGETS.coldP99VsWarm,
    },
    {
      id: 'openingColdConnectP99',
      name: `cold opening burst: p99 of the time to open a connection ≤ ${OPENING_TARGETS.coldConnectP99Ms} ms, ${withDefault}`,
      measured:
        `${chosen.coldConnectP99Ms} ms (median; rounds ${rounds.map((round) => round.cold.connect.p99).join(', ')} ms; ` +
        `max ${rounds.map((round) => round.cold.connect.max).join(', ')} ms; kernel listen overflows ` +
        `${rounds.map((round) => round.cold.connect.kernel.listenOverflows).join(', ')}, SYN retransmits ` +
        `${rounds.map((round) => round.cold.connect.kernel.synRetransmits).join(', ')})`,
      value: chosen.coldConnectP99Ms,
      pass: chosen.coldConnectP99Ms <= OPENING_TARGETS.coldConnectP99Ms,
    },
    {
      id: 'shortSaleCpuVsSteady',
      name:
        `whole short sale from a fresh start: machine CPU per purchase ≤ ${times(OPENING_TARGETS.shortSaleCpuVsSteady)} ` +
        `the steady state's, ${withDefault}`,
      measured: medianAndRounds(chosen.shortSaleVsSteady, rounds, (round) => round.shortSaleVsSteady),
      value: chosen.shortSaleVsSteady,
      pass: chosen.shortSaleVsSteady <= OPENING_TARGETS.shortSaleCpuVsSteady,
    },
    {
      id: 'openingDefaultFastest',
      name: 'the default number of API processes sold the whole short sale fastest and cheapest of those measured here',
      measured:
        `default ${processesLabel(chosen.processes)}; medians: ` +
        opening.configurations
          .map(
            (c) =>
              `${processesLabel(c.processes)}: ${thousands(c.shortSale.reqPerSec)} purchases/s, ` +
              `${thousands(c.shortSale.machineCpuUs)} µs`,
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
  const { buyers, connections, stock, shortSale, rounds } = opening.settings;
  const processesCell = (c) => `${processesLabel(c.processes)}${c.isDefault ? ' (default)' : ''}`;
  const burstRow = (c, round, when, s) =>
    `| ${processesCell(c)} | ${round.roundNo} | ${when} | ${thousands(s.reqPerSec)} | ` +
    `${s.elapsedToLastResponseS} | ${s.connect.p99} | ${s.connect.max} | ${s.latencyMs.p50} | ${s.latencyMs.p99} | ` +
    `${s.latencyMs.max ?? ''} | ${thousands(s.perAccepted.machineCpuUs)} | ${s.errors} |`;
  return [
    '## (h) the opening second: cold processes, as `npm start` leaves them',
    '',
    `${rounds} round(s) per API process count, the counts taking turns; the ratios below are each count's median ` +
      'round (one burst lasts half a second: a single round swings by a third on a shared machine).',
    '',
    `**Opening burst** — fresh API and worker processes; as soon as \`/health/ready\` answers, a sale of ${stock} ` +
      `units is created and ${thousands(buyers)} distinct buyers hit it on ${connections} connections (the first ` +
      `purchase ${opening.configurations
        .flatMap((c) => c.rounds.map((round) => `${round.readyToFirstPurchaseMs} ms`))
        .join(' / ')} after readiness). ` +
      "Then the same burst on a new sale, on the same processes, warm. Connect: from the load generator's " +
      '`connect()` to its connection being open, per connection (the kernel completes a handshake before the ' +
      'server accepts it, so only a dropped SYN — a full listen queue — or a starved load generator makes it ' +
      "long); the kernel's listen-queue overflows and SYN retransmits over the burst are in the targets.",
    '',
    '| API processes | round | run | req/s | burst length (s) | connect p99 (ms) | connect max (ms) | p50 (ms) | p99 (ms) | max (ms) | machine CPU µs / accepted purchase, until written | errors |',
    '|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...opening.configurations.flatMap((c) =>
      c.rounds.flatMap((round) => [burstRow(c, round, 'cold', round.cold), burstRow(c, round, 'warm', round.warm)]),
    ),
    '',
    ...opening.configurations.map(
      (c) =>
        `${processesLabel(c.processes)}: cold / warm req/s **${medianAndRounds(c.coldVsWarm.reqPerSec, c.rounds, (round) => round.coldVsWarm.reqPerSec)}**, ` +
        `p99 **${medianAndRounds(c.coldVsWarm.p99, c.rounds, (round) => round.coldVsWarm.p99)}**, machine CPU per purchase ` +
        `${medianAndRounds(c.coldVsWarm.machineCpuPerPurchase, c.rounds, (round) => round.coldVsWarm.machineCpuPerPurchase)}.`,
    ),
    '',
    `**Whole short sale** — fresh processes again; ${thousands(shortSale.buyers)} buyers on ` +
      `${r.settings.connections} connections each buy one unit, until the worker has written every order; then ` +
      `on the same processes a ${r.settings.warmupS} s warm-up and ${r.settings.durationS} s of live purchases ` +
      '(the steady state), measured the same way; then the same short sale again on a new sale, the processes now ' +
      'warm: what a run this short costs apart from the processes being cold.',
    '',
    '| API processes | round | short sale: purchases/s | p99 (ms) | machine CPU µs / purchase | steady state: purchases/s | machine CPU µs / purchase | short sale / steady | the short sale again, warm: µs / purchase | warm short sale / steady |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...opening.configurations.flatMap((c) =>
      c.rounds.map(
        (round) =>
          `| ${processesCell(c)} | ${round.roundNo} | ${thousands(round.shortSale.reqPerSec)} | ` +
          `${round.shortSale.latencyMs.p99} | ${thousands(round.shortSale.perAccepted.machineCpuUs)} | ` +
          `${thousands(round.steady.reqPerSec)} | ${thousands(round.steady.perAccepted.machineCpuUs)} | ${times(round.shortSaleVsSteady)} | ` +
          `${thousands(round.shortSaleWarm.perAccepted.machineCpuUs)} | ${times(round.shortSaleWarmVsSteady)} |`,
      ),
    ),
    '',
    ...opening.configurations.map(
      (c) =>
        `${processesLabel(c.processes)}: short sale / steady **${medianAndRounds(c.shortSaleVsSteady, c.rounds, (round) => round.shortSaleVsSteady)}**; ` +
        `the same warm ${medianAndRounds(c.shortSaleWarmVsSteady, c.rounds, (round) => round.shortSaleWarmVsSteady)}; ` +
        `median short sale ${thousands(c.shortSale.reqPerSec)} purchases/s, ${thousands(c.shortSale.machineCpuUs)} µs per purchase.`,
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
