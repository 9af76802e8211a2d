/**
 * The scale section of the report: API processes, a hot sale's buckets on a Redis Cluster, and what the
 * durable acknowledgement (DURABLE_ACK=replica) costs on a cluster with replicas. Also
 * its own report when the section runs alone (`--only scale`): bench/results/scale.{md,json}.
 */
import { percent, thousands, times } from '../format.mjs';
import { NOISY_OTHER_PERCENT, SETTINGS } from '../settings.mjs';
import { writeSectionReport } from './section-report.mjs';

const latencies = (s) => `${s.latencyMs.p50} | ${s.latencyMs.p99}`;
const errors = (s) => `${s.errors}${s.timeouts ? ` (+${s.timeouts} timeouts)` : ''}`;

/** The busiest master's script share with buckets, as a target line (reported, never an exit code). */
export function scaleTargets(r) {
  const cluster = r.scale?.cluster;
  if (!cluster) return [];
  const spread = cluster.rows.find((row) => row.buckets > 1);
  const name =
    `one hot sale over ${spread?.buckets ?? SETTINGS.scaleBuckets} buckets on a ${cluster.masters.length}-master ` +
    `Redis Cluster: the busiest master runs ≤ ${percent(cluster.busiestShareTarget)} of all script time`;
  if (!spread || spread.refused)
    return [
      {
        id: 'clusterBusiestMasterShare',
        name,
        measured: spread?.refused
          ? `not measured: the API refused \`buckets\` (${spread.refused.status}: ${spread.refused.message})`
          : 'not measured',
        value: null,
        pass: null,
      },
    ];
  return [
    {
      id: 'clusterBusiestMasterShare',
      name,
      measured:
        `${percent(spread.busiestScriptShare)} (1 bucket: ` +
        `${percent(cluster.rows.find((row) => row.buckets === 1)?.busiestScriptShare)})`,
      value: spread.busiestScriptShare,
      pass: spread.busiestScriptShare <= cluster.busiestShareTarget,
    },
  ];
}

export function scaleSection(r) {
  if (!r.scale) return [];
  return [
    '## (f) scale: API processes, Redis Cluster buckets, durable acknowledgement',
    '',
    ...processLines(r),
    ...clusterLines(r),
    ...durableAckLines(r),
  ];
}

function processLines(r) {
  const { processes } = r.scale;
  const [one, many] = processes.rows;
  return [
    `**API processes** — one hot redis-lua sale (stock ${thousands(r.settings.liveStock)}), ` +
      `${r.settings.connections} connections, ${r.settings.durationS} s each after a ${r.settings.warmupS} s ` +
      'warm-up; the same worker, Redis and MariaDB.',
    '',
    '| configuration | purchases/s | p50 (ms) | p99 (ms) | API CPU (% of one core, all processes) | load generator (% of one core) | machine busy (% of all cores) | other processes (% of one core) | machine CPU µs / purchase | errors |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...processes.rows.map(
      (row) =>
        `| ${row.processes} API process${row.processes > 1 ? 'es' : ''} (${row.how}) | ${thousands(row.reqPerSec)} | ` +
        `${latencies(row)} | ${row.cpu.api} | ${row.cpu.loadGenerator} | ${row.cpu.machineBusyOfAllCores} | ` +
        `${row.cpu.otherProcesses} | ${thousands(row.perAccepted.machineCpuUs)} | ${errors(row)} |`,
    ),
    '',
    ...noisyWarning(processes.rows),
    `${many.processes} processes / 1: purchases/s **${times(processes.reqPerSecRatio)}**, machine CPU per ` +
      `purchase ${times(processes.machineCpuPerPurchaseRatio)}. The API's CPU by process (the primary first, ` +
      `warm-up and run): ${many.apiCpuShares.map(percent).join(', ')}. Machine CPU per purchase = API (every process, ` +
      `the cluster module's primary included) + worker + Redis + MariaDB, until the worker had written the ` +
      `run's orders (as for the live sale), never the load generator. The load generator, the API processes, ` +
      `the worker, Redis and MariaDB share this machine's ${r.machine.cpuCount} cores: with the machine ` +
      `${one.cpu.machineBusyOfAllCores} % busy on one process, a second one can only take CPU from the others, ` +
      'so the ratio says what the cores allow here, not what a second API machine would add.',
    '',
  ];
}

function clusterLines(r) {
  const { cluster } = r.scale;
  const masters = cluster.masters.map((m) => `${m.address} (slots ${m.slots})`).join(', ');
  const measuredRows = cluster.rows.filter((row) => !row.refused);
  return [
    `**Redis Cluster** — a second stack (its own API, worker and database) on a ${cluster.masters.length}-master ` +
      `Redis Cluster (${masters}); one hot sale with 1 bucket, then one over more buckets (create-sale ` +
      '`buckets`). Script time = `cmdstat_evalsha` + `eval` + `fcall` µs (and their `_ro` forms) from each ' +
      "master's `INFO commandstats`, warm-up excluded, until the worker had written the run's orders: " +
      "mostly the reservation script (one per purchase), and BullMQ's scripts on the queue's master.",
    '',
    '| buckets | purchases/s | p50 (ms) | p99 (ms) | busiest master: share of script time | machine CPU µs / purchase | other processes (% of one core) | errors |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
    ...cluster.rows.map((row) =>
      row.refused
        ? `| ${row.buckets} | refused by the API (${row.refused.status}: ${row.refused.message}): this build has no bucket option; not measured | | | | | | |`
        : `| ${row.buckets}${bucketNote(row)} | ${thousands(row.reqPerSec)} | ${latencies(row)} | ` +
          `**${percent(row.busiestScriptShare)}** | ${thousands(row.perAccepted.machineCpuUs)} | ` +
          `${row.cpu.otherProcesses} | ${errors(row)} |`,
    ),
    '',
    ...(measuredRows.length
      ? [
          '| buckets | master | script µs | share of script time | all commands µs | share of all command time |',
          '|---|---|---:|---:|---:|---:|',
          ...measuredRows.flatMap((row) =>
            row.masters.map(
              (m) =>
                `| ${row.buckets} | ${m.node}${m.node === row.saleSlotMaster ? ' (the sale’s own slot)' : ''} | ` +
                `${thousands(m.scriptUsec)} | ${percent(m.scriptShare)} | ${thousands(m.totalUsec)} | ${percent(m.totalShare)} |`,
            ),
          ),
          '',
        ]
      : []),
    `Target: with buckets, the busiest master runs at most ${percent(cluster.busiestShareTarget)} of the script ` +
      `time (an even spread over ${cluster.masters.length} masters is ${percent(1 / cluster.masters.length)}).`,
    '',
  ];
}

function durableAckLines(r) {
  const durable = r.scale.durableAck;
  if (!durable) return [];
  const masters = durable.nodes.filter((node) => node.role === 'master');
  const replicas = durable.nodes.filter((node) => node.role === 'replica');
  const { ratios } = durable;
  const micros = (value) => (value === null || value === undefined ? 'n/a' : value.toFixed(1));
  return [
    `**Durable acknowledgement** — a stack of its own on a ${masters.length}-master Redis Cluster with one ` +
      `replica per master (${replicas.map((node) => `${node.address} of ${node.replicaOf}`).join(', ')}); one hot ` +
      'redis-lua sale (1 bucket) with the API on `DURABLE_ACK=off`, then, the API and worker restarted on the ' +
      'same cluster and database, a new one on `DURABLE_ACK=replica`: a 202 only once the master holding the ' +
      "buyer's bucket has had a replica confirm it (a marker write and `WAIT 1`, batched per master). Redis " +
      "µs = all command time from every node's `INFO commandstats`, masters and replicas (which apply the " +
      "replication stream), warm-up excluded, until the worker had written the run's orders; WAIT calls = " +
      '`cmdstat_wait` calls, which only `replica` sends. The load generator, the API, the worker, MariaDB and ' +
      `the ${durable.nodes.length} Redis nodes share this machine's ${r.machine.cpuCount} cores: read the ratio of ` +
      'the two rows of one run, not the absolute figures.',
    '',
    ...noisyWarning(durable.rows),
    '| DURABLE_ACK | purchases/s | p50 (ms) | p99 (ms) | API CPU µs / purchase | machine CPU µs / purchase | Redis µs / purchase, all nodes | masters | replicas | WAIT calls (per purchase) | other processes (% of one core) | errors |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...durable.rows.map(
      (row) =>
        `| ${row.setting} | ${thousands(row.reqPerSec)} | ${latencies(row)} | ${thousands(row.perAccepted.apiCpuUs)} | ` +
        `${thousands(row.perAccepted.machineCpuUs)} | ${micros(row.perAccepted.redisUs)} | ` +
        `${micros(row.redisUsByRole.masters)} | ${micros(row.redisUsByRole.replicas)} | ` +
        `${thousands(row.waitCalls)} (${row.waitCallsPerPurchase}) | ${row.cpu.otherProcesses} | ${errors(row)} |`,
    ),
    `| **replica / off** | **${times(ratios.reqPerSec)}** | ${times(ratios.p50)} | ${times(ratios.p99)} | ` +
      `**${times(ratios.apiCpuUs)}** | ${times(ratios.machineCpuUs)} | **${times(ratios.redisUs)}** | ` +
      `${times(ratios.mastersRedisUs)} | ${times(ratios.replicasRedisUs)} | | | |`,
    '',
    '| node | role | ' +
      durable.rows.map((row) => `${row.setting}: µs / purchase | ${row.setting}: WAIT calls`).join(' | ') +
      ' |',
    `|---|---|${durable.rows.map(() => '---:|---:|').join('')}`,
    ...durable.nodes.map((node) => {
      const cells = durable.rows.map((row) => {
        const measured = row.nodes.find((n) => n.node === node.address);
        return `${micros(measured?.usPerPurchase)} | ${thousands(measured?.waitCalls)}`;
      });
      const salesHere = durable.rows.filter((row) => row.saleSlotMaster === node.address).map((row) => row.setting);
      const sale = salesHere.length ? ` (the ${salesHere.join(' and ')} sale’s slot)` : '';
      return `| ${node.address}${sale} | ${node.role === 'replica' ? `replica of ${node.replicaOf}` : 'master'} | ${cells.join(' | ')} |`;
    }),
    '',
  ];
}

/** A ratio of two runs means little when other processes took a core's worth from one of them. */
function noisyWarning(rows) {
  const other = rows.map((row) => row.cpu.otherProcesses ?? 0);
  if (other.every((value) => value <= NOISY_OTHER_PERCENT)) return [];
  return [
    `**Noisy: other processes used ${other.join(' and ')} % of a core during these runs (above ` +
      `${NOISY_OTHER_PERCENT} %): the ratios below are not comparable; run again on a quiet machine.**`,
    '',
  ];
}

/** Whether the sale's answer confirmed the buckets asked for (a build may accept the field without echoing it). */
function bucketNote(row) {
  if (row.buckets === 1) return '';
  return row.bucketsInAnswer === row.buckets
    ? ''
    : ` (the sale's answer has buckets ${row.bucketsInAnswer ?? 'absent'}: the masters' shares tell whether it spread)`;
}

/** `--only scale`: the section alone, printed and written to bench/results/scale.{md,json}. */
export function writeScaleReport(results) {
  return writeSectionReport(results, {
    name: 'scale',
    title: 'scale section',
    targets: scaleTargets,
    section: scaleSection,
  });
}
