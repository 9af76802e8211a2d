/**
 * `npm run chaos -- [--world local|machines] [--app-env K=V,...] [--runs N] [--seed S --path P [--replay-path R]] [--faults a,b] [--budget 10m]
 * [--actions N] [--shrinks N] [--stock N] [--limit N] [--buckets 1,3] [--strategies a,b] [--rooms none,room]
 * [--crowd N] [--keep-going] [--help]`:
 * the fault-schedule explorer (docs/chaos.md).
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { SALE_STRATEGIES, type SaleStrategy } from '@flash-sale/contract';
import { ChaosCluster } from './cluster';
import { FAULT_KINDS, type FaultKind, LOCAL_WORLD_FAULT_KINDS, MACHINES_WORLD_FAULT_KINDS } from './commands';
import {
  explore,
  type ExplorerOptions,
  type ExplorerSummary,
  ROOM_DRAWS,
  type RoomDraw,
  type World,
  WORLDS,
} from './explorer';
import { MachinesCluster } from './machines-cluster';

/** `parseArgs`, with an unknown or malformed option said in one line (exit 2) rather than a stack trace. */
function parseCommandLine<T extends ParseArgsConfig>(config: T): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs(config);
  } catch (error) {
    console.error(`chaos: ${(error as Error).message} (npm run chaos -- --help)`);
    process.exit(2);
  }
}

const { values } = parseCommandLine({
  options: {
    world: { type: 'string', default: 'local' },
    'app-env': { type: 'string', default: '' },
    'mysql-replication': { type: 'string', default: 'semi-sync' },
    runs: { type: 'string', default: '20' },
    seed: { type: 'string' },
    path: { type: 'string' },
    'replay-path': { type: 'string' },
    faults: { type: 'string' },
    budget: { type: 'string', default: '15m' },
    actions: { type: 'string', default: '30' },
    shrinks: { type: 'string', default: '30' },
    stock: { type: 'string', default: '12' },
    limit: { type: 'string', default: '3' },
    buckets: { type: 'string', default: '1,3' },
    strategies: { type: 'string', default: 'redis-lua,redis-lock,db-segmented' },
    crowd: { type: 'string', default: '80' },
    rooms: { type: 'string', default: 'none,room' },
    'keep-going': { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});

const USAGE = `npm run chaos -- [options]   (docs/chaos.md)
  --world W                local: the processes on this machine (default); machines: the deployment
                           as machines on a network (root; docs/chaos.md "Worlds")
  --app-env K=V,...        settings for the apps on top of the explorer's (DURABLE_ACK=off, say)
  --mysql-replication R    machines world: semi-sync (default) or async, to watch a failover lose commits
  --runs N                 schedules to try (20)
  --seed S --path P        replay run P of seed S (--replay-path R: a shrunk schedule)
  --faults a,b             fault kinds (all of the world's); local: ${LOCAL_WORLD_FAULT_KINDS.join(', ')}
                           machines: ${MACHINES_WORLD_FAULT_KINDS.join(', ')}
  --strategies a,b         sale strategies drawn per run (redis-lua,redis-lock,db-segmented); any of ${SALE_STRATEGIES.join(', ')}
  --buckets a,b            bucket counts of a redis-lua sale (1,3)
  --rooms a,b              sales with or without a waiting room, drawn per run (none,room)
  --crowd N                most attempts of one crowd command, and the sold-out trickle (80; 0: neither)
  --budget T               no new run after this long (15m)
  --actions N              most commands per schedule (30)
  --shrinks N              shrink candidates per step (30)
  --stock N --limit N      the sale each run sells (12, 3)
  --keep-going             record violations and go on`;

function integer(name: string, raw: string | undefined): number {
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`--${name} must be a whole number, got "${raw}"`);
  return value;
}

/** `90s`, `10m`, `1h` or plain seconds. */
function duration(raw: string): number {
  const match = /^(\d+)(s|m|h)?$/.exec(raw);
  if (!match) throw new Error(`--budget must look like 90s, 10m or 1h, got "${raw}"`);
  return Number(match[1]) * { s: 1_000, m: 60_000, h: 3_600_000 }[(match[2] ?? 's') as 's' | 'm' | 'h'];
}

function faultKinds(raw: string): FaultKind[] {
  const kinds = raw
    .split(',')
    .map((kind) => kind.trim())
    .filter(Boolean);
  for (const kind of kinds) {
    if (!(FAULT_KINDS as readonly string[]).includes(kind)) {
      throw new Error(`unknown fault "${kind}"; the kinds are ${FAULT_KINDS.join(', ')}`);
    }
  }
  return kinds as FaultKind[];
}

function world(raw: string): World {
  if (!(WORLDS as readonly string[]).includes(raw)) throw new Error(`--world is ${WORLDS.join(' or ')}, got "${raw}"`);
  return raw as World;
}

function mysqlReplication(raw: string): 'semi-sync' | 'async' {
  if (raw !== 'semi-sync' && raw !== 'async')
    throw new Error(`--mysql-replication is semi-sync or async, got "${raw}"`);
  return raw;
}

/** `K=V,K=V`: settings for the apps. */
function appEnv(raw: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const pair of list(raw)) {
    const match = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(pair);
    if (!match) throw new Error(`--app-env takes NAME=value pairs, got "${pair}"`);
    env[match[1]!] = match[2]!;
  }
  return env;
}

function list(raw: string): string[] {
  return raw
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}

function strategies(raw: string): SaleStrategy[] {
  const names = list(raw);
  for (const name of names) {
    if (!(SALE_STRATEGIES as readonly string[]).includes(name)) {
      throw new Error(`unknown strategy "${name}"; the strategies are ${SALE_STRATEGIES.join(', ')}`);
    }
  }
  if (names.length === 0) throw new Error('--strategies needs at least one strategy');
  return names as SaleStrategy[];
}

function roomDraws(raw: string): RoomDraw[] {
  const names = list(raw);
  for (const name of names) {
    if (!(ROOM_DRAWS as readonly string[]).includes(name)) {
      throw new Error(`unknown room draw "${name}"; --rooms takes ${ROOM_DRAWS.join(', ')}`);
    }
  }
  if (names.length === 0) throw new Error('--rooms needs none, room or both');
  return names as RoomDraw[];
}

function bucketCounts(raw: string): number[] {
  const counts = list(raw).map((item) => integer('buckets', item));
  if (counts.length === 0 || counts.some((n) => n < 1))
    throw new Error(`--buckets must list counts >= 1, got "${raw}"`);
  return counts;
}

/** min / median / max of the answers each run checked. */
function spread(values: number[]): string {
  if (values.length === 0) return '-';
  const sorted = [...values].sort((a, b) => a - b);
  return `${sorted[0]} / ${sorted[Math.floor(sorted.length / 2)]} / ${sorted.at(-1)} (min / median / max)`;
}

function printSummary(summary: ExplorerSummary, options: ExplorerOptions): void {
  const rows: [string, string][] = [
    ['seed', String(summary.seed)],
    ['runs', String(summary.runs)],
    ['time', `${Math.round(summary.elapsedMs / 1000)} s`],
    ...[...summary.faults].sort().map(([kind, n]): [string, string] => [`faults: ${kind}`, String(n)]),
    ...[...summary.sales].sort().map(([sale, n]): [string, string] => [`runs: ${sale}`, String(n)]),
    ['answers checked', String(summary.answersChecked)],
    ['answers per run', spread(summary.answersPerRun)],
    ['202s lost as the emulated persistence allows', String(summary.lostAsDocumented)],
    ['violations', String(summary.violations)],
    ['failing runs', summary.failingRuns.map((run) => `#${run.run} (${run.invariants.join(', ')})`).join('; ') || '-'],
    ['explorer errors', String(summary.explorerErrors.length)],
  ];
  const width = Math.max(...rows.map(([label]) => label.length));
  console.log('\n' + rows.map(([label, value]) => `${label.padEnd(width)}  ${value}`).join('\n'));
  console.log(
    `\nviolations ${summary.violations}, explorer errors ${summary.explorerErrors.length}, runs ${summary.runs}, seed ${summary.seed}`,
  );
  if (summary.explorerErrors.length > 0) {
    // The explorer's own failures: not violations of the product; each run was cut short and not judged.
    console.log('\nexplorer errors (not violations; those runs were not judged):');
    for (const error of summary.explorerErrors) console.log(`  run ${error.run}: ${error.message}`);
  }
  // --keep-going: each failing run replays alone from its path, which counts from 0 where runs count from 1.
  for (const failing of summary.failingRuns) {
    console.log(
      `replay run ${failing.run}: npm run chaos -- ${replayOptions(options, summary.seed, String(failing.run - 1))} --runs 1`,
    );
  }
  const failure = summary.failure;
  if (!failure) return;
  const shrunk = failure.shrinks > 0 ? `shrunk ${failure.shrinks} times` : 'not shrunk';
  console.log(`\nVIOLATION (sale ${failure.sale}, schedule of ${failure.schedule.length} commands, ${shrunk}):`);
  for (const line of failure.schedule) console.log(`  ${line}`);
  console.log('\nbroken invariants:');
  for (const violation of failure.violations) console.log(`  ${violation.invariant}: ${violation.detail}`);
  console.log('\nhistory of the failing run:');
  for (const line of failure.history) console.log(`  ${line}`);
  console.log(`\nreplay: npm run chaos -- ${replayOptions(options, failure.seed, failure.path, failure.replayPath)}`);
  console.log(`process logs and Redis' file: ${failure.workingDirectory}`);
}

/** The options that replay one run: its seed and fast-check path (and shrunk schedule), and this exploration's settings. */
function replayOptions(options: ExplorerOptions, seed: number, path: string, replayPath?: string): string {
  const env = Object.entries(options.appEnv ?? {}).map(([name, value]) => `${name}=${value}`);
  return [
    options.world === 'machines' ? '--world machines' : '',
    env.length > 0 ? `--app-env ${env.join(',')}` : '',
    options.mysqlReplication === 'async' ? '--mysql-replication async' : '',
    `--seed=${seed}`,
    `--path ${path}`,
    replayPath ? `--replay-path '${replayPath}'` : '',
    `--faults ${options.faults.join(',')}`,
    `--actions ${options.maxCommands}`,
    `--stock ${options.stock} --limit ${options.perUserLimit}`,
    `--buckets ${options.buckets.join(',')} --strategies ${options.strategies.join(',')} --crowd ${options.crowd ?? 0}`,
    `--rooms ${(options.rooms ?? ['none']).join(',')}`,
  ]
    .filter(Boolean)
    .join(' ');
}

async function main(): Promise<void> {
  if (values.help) {
    console.log(USAGE);
    return;
  }
  const chosenWorld = world(values.world!);
  const options: ExplorerOptions = {
    world: chosenWorld,
    appEnv: appEnv(values['app-env']!),
    mysqlReplication: mysqlReplication(values['mysql-replication']!),
    runs: integer('runs', values.runs),
    seed: values.seed === undefined ? undefined : Number(values.seed),
    path: values.path,
    replayPath: values['replay-path'],
    faults: faultKinds(
      values.faults ?? (chosenWorld === 'machines' ? MACHINES_WORLD_FAULT_KINDS : LOCAL_WORLD_FAULT_KINDS).join(','),
    ),
    budgetMs: duration(values.budget!),
    maxCommands: integer('actions', values.actions),
    maxShrinks: integer('shrinks', values.shrinks),
    stock: integer('stock', values.stock),
    perUserLimit: integer('limit', values.limit),
    buckets: bucketCounts(values.buckets!),
    strategies: strategies(values.strategies!),
    crowd: integer('crowd', values.crowd),
    rooms: roomDraws(values.rooms!),
    keepGoing: values['keep-going'],
    onProgress: (line) => console.log(line),
  };
  console.log(
    `chaos: ${options.world} world, ${options.runs} runs, up to ${options.maxCommands} actions each, faults ${options.faults.join(',')}, buckets ${options.buckets.join(',')}, strategies ${options.strategies.join(',')}, rooms ${options.rooms!.join(',')}, crowd ${options.crowd}, budget ${values.budget}`,
  );
  const summary = await explore(options);
  printSummary(summary, options);
  // Violations fail the exploration; explorer errors alone do not (they are printed apart).
  process.exitCode = summary.failure || summary.violations > 0 ? 1 : 0;
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.log(`\n${signal}: stopping the processes`);
    void Promise.all([ChaosCluster.stopRunning(), MachinesCluster.stopRunning()]).finally(() => process.exit(130));
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 2;
});
