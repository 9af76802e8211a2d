import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SaleStrategy } from '@flash-sale/contract';
import fc from 'fast-check';
import type { Violation } from './checker';
import { ChaosCluster } from './cluster';
import { MachinesCluster } from './machines-cluster';
import type { SystemUnderTest } from './system-under-test';
import { type FaultKind, LOCAL_WORLD_FAULT_KINDS, MACHINES_WORLD_FAULT_KINDS, scheduleArbitrary } from './commands';
import { currentStep, DeadlinePassed, ExplorerError, withDeadline } from './explorer-error';
import { answersByStatus, describe, type RoomSettings } from './history';
import { playRun, type RunContext } from './run';

/** Whether a run's sale has a waiting room: drawn per run among `--rooms`. */
export type RoomDraw = 'none' | 'room';
export const ROOM_DRAWS: readonly RoomDraw[] = ['none', 'room'];

/** Where the runs play (docs/chaos.md "Worlds"): processes on this machine, or the deployment as machines. */
export type World = 'local' | 'machines';
export const WORLDS: readonly World[] = ['local', 'machines'];

export interface ExplorerOptions {
  /** `local` when absent. */
  world?: World;
  /** Settings for the apps on top of the explorer's: `{ DURABLE_ACK: 'off' }` to see what it protects. */
  appEnv?: Record<string, string>;
  /** The machines world's MySQL replication: semi-synchronous when absent; `async` to see what that protects. */
  mysqlReplication?: 'semi-sync' | 'async';
  runs: number;
  seed?: number;
  path?: string;
  /** fast-check's replay hint for the command list (printed with a failure). */
  replayPath?: string;
  faults: FaultKind[];
  /** Stop starting new runs (and shrinking) after this long. */
  budgetMs: number;
  maxCommands: number;
  /** Shrink attempts after a failure (each one is a whole run on the real processes). */
  maxShrinks: number;
  stock: number;
  perUserLimit: number;
  /** Redis buckets a run's sale may be spread over, one drawn per run (a redis-lua sale's; the others have 1). */
  buckets: number[];
  /** Strategies a run's sale may use, one drawn per run. */
  strategies: SaleStrategy[];
  /**
   * With or without a waiting room, one drawn per run (its settings drawn too); absent: `['none']`. With
   * `room` among them the schedule also draws the room's client actions and admin changes of the room.
   */
  rooms?: RoomDraw[];
  /**
   * Most attempts of one `crowd(n)` command, and the sold-out trickle through each run (test/chaos/crowd.ts);
   * 0 or absent: neither.
   */
  crowd?: number;
  /** Record violations and keep running new schedules instead of stopping (and shrinking) at the first. */
  keepGoing?: boolean;
  onProgress?: (line: string) => void;
}

export interface Failure {
  seed: number;
  path: string;
  replayPath: string | undefined;
  /** The failing schedule (shrunk if `shrinks` > 0), one command a line. */
  schedule: string[];
  shrinks: number;
  violations: Violation[];
  /** The failing run's history, one answer a line. */
  history: string[];
  /** The failing run's sale: strategy/buckets. */
  sale: string;
  workingDirectory: string;
}

export interface ExplorerSummary {
  runs: number;
  faults: Map<string, number>;
  answersChecked: number;
  /** Answers checked in each run, in order. */
  answersPerRun: number[];
  /** Runs by the sale they sold: `redis-lua/3` (strategy/buckets). */
  sales: Map<string, number>;
  /**
   * `202`s lost because Redis lost acknowledged data as the persistence setting a fault emulates allows
   * (docs/failure-model.md "A restart from an older copy"): counted, not violations.
   */
  lostAsDocumented: number;
  violations: number;
  /** Runs that found a violation, with the invariants each broke (shrink attempts included). */
  failingRuns: { run: number; invariants: string[] }[];
  /** Runs the explorer's own failure cut short (explorer-error.ts): not judged, never violations. */
  explorerErrors: { run: number; message: string }[];
  failure?: Failure;
  seed: number;
  elapsedMs: number;
}

/** A drawn room: what a run's sale is created with when its draw is `room`. */
const roomSettings: fc.Arbitrary<RoomSettings> = fc
  .tuple(
    fc.integer({ min: 1, max: 6 }),
    fc.option(fc.integer({ min: 1, max: 4 }), { nil: undefined }),
    fc.integer({ min: 10, max: 14 }),
  )
  .map(([admitPerSecond, maxShopping, passSeconds]) => ({
    admitPerSecond,
    ...(maxShopping === undefined ? {} : { maxShopping }),
    passSeconds,
  }));

class ViolationFound extends Error {
  constructor(readonly violations: Violation[]) {
    super(violations.map((violation) => `${violation.invariant}: ${violation.detail}`).join('\n'));
  }
}

/**
 * The fault-schedule explorer: fast-check generates schedules of client actions and faults (and
 * shrinks a failing one), each run plays one on the real processes against a fresh sale, waits for
 * quiet, settles every unknown answer with a replay, and the checker judges the history.
 */
/** Far beyond a run's longest schedule (its faults, quiet and checks take a few minutes at most). */
const RUN_DEADLINE_MS = 15 * 60_000;
/** Stopping and starting every process: well under a minute on a loaded machine. */
const RECOVERY_DEADLINE_MS = 3 * 60_000;

export async function explore(options: ExplorerOptions): Promise<ExplorerSummary> {
  const started = Date.now();
  const privateMysql = options.faults.includes('mysql-pause');
  const rooms = options.rooms ?? ['none'];
  const world = options.world ?? 'local';
  const worldKinds: readonly FaultKind[] = world === 'machines' ? MACHINES_WORLD_FAULT_KINDS : LOCAL_WORLD_FAULT_KINDS;
  const foreign = options.faults.filter((kind) => !worldKinds.includes(kind));
  if (foreign.length > 0) {
    throw new ExplorerError(
      `the ${world} world has no fault ${foreign.join(', ')}; its kinds are ${worldKinds.join(', ')}`,
    );
  }
  const cluster: SystemUnderTest =
    world === 'machines'
      ? await MachinesCluster.start(options.appEnv, options.mysqlReplication)
      : await ChaosCluster.start({ privateMysql, appEnv: options.appEnv });
  const faults = new Map<string, number>();
  let runs = 0;
  let answersChecked = 0;
  const answersPerRun: number[] = [];
  const sales = new Map<string, number>();
  let lostAsDocumented = 0;
  let violations = 0;
  const failingRuns: ExplorerSummary['failingRuns'] = [];
  const explorerErrors: ExplorerSummary['explorerErrors'] = [];
  let lastFailingRun: { violations: Violation[]; history: string[]; sale: string } | undefined;
  let keepDirectory = false;
  /** Set when the processes could not be brought back after an explorer error: no further run can start. */
  let broken = false;
  try {
    const adminJwt = await adminToken(cluster);
    const context: RunContext = {
      cluster,
      adminJwt,
      faults,
      kinds: new Set(options.faults),
      crowd: !!options.crowd,
      made: { saleIds: new Set(), userIds: new Set(), unansweredSignIns: 0, unknownGuests: new Set() },
    };
    const property = fc.asyncProperty(
      scheduleArbitrary(
        new Set(options.faults),
        options.perUserLimit,
        options.maxCommands,
        options.replayPath,
        options.maxShrinks,
        options.crowd ?? 0,
        rooms.includes('room'),
      ),
      // Drawn after the schedule, so a seed's schedules do not depend on these lists.
      fc.noBias(fc.constantFrom(...options.buckets)),
      fc.noBias(fc.constantFrom(...options.strategies)),
      fc.noBias(fc.constantFrom(...rooms)),
      fc.noBias(roomSettings),
      async (schedule, drawnBuckets, strategy, roomDraw, drawnRoom) => {
        // The budget: no new run (nor shrink attempt) once spent. Not fast-check's interruptAfterTimeLimit,
        // which returns while a run is still playing, leaving its processes to outlive the cluster's stop.
        if (broken || Date.now() - started >= options.budgetMs) return;
        runs += 1;
        const faultsBefore = new Map(faults);
        // Buckets are a redis-lua sale's; the others keep their stock in one place.
        const buckets = strategy === 'redis-lua' ? drawnBuckets : 1;
        const room = roomDraw === 'room' ? drawnRoom : null;
        const saleName = `${strategy}/${buckets}${room ? `/room(${roomLabel(room)})` : ''}`;
        const saleKey = `${strategy}/${buckets}${room ? '/room' : ''}`;
        sales.set(saleKey, (sales.get(saleKey) ?? 0) + 1);
        let result: Awaited<ReturnType<typeof playRun>>;
        try {
          result = await withDeadline(
            playRun(context, schedule, {
              stock: options.stock,
              perUserLimit: options.perUserLimit,
              buckets,
              strategy,
              room,
            }),
            RUN_DEADLINE_MS,
            `run ${runs}`,
          );
        } catch (error) {
          // The explorer's own failure: reported apart, the processes brought back, the next run starts.
          const explorerError = ExplorerError.wrap(error, `run ${runs} failed in the explorer`);
          explorerErrors.push({ run: runs, message: explorerError.message });
          options.onProgress?.(
            `run ${runs}: ${saleName}: EXPLORER ERROR, the run is not judged: ${explorerError.message}`,
          );
          // Its schedule, to replay it (`--seed S --path`, or read): kept with the processes' log.
          const file = join(cluster.dir, `run-${runs}.explorer-error`);
          writeFileSync(file, [explorerError.message, '', ...schedule.toString().split(/,(?![^(]*\))/)].join('\n'));
          keepDirectory = true;
          options.onProgress?.(`  schedule and processes' log: ${cluster.dir}`);
          // A run that hung may still be playing against the processes: nothing can follow it.
          if (error instanceof DeadlinePassed) {
            broken = true;
            const stuckFor = Math.round((Date.now() - currentStep.since) / 1000);
            options.onProgress?.(`  hung at: ${currentStep.step} (for ${stuckFor} s)`);
            options.onProgress?.('  EXPLORER ERROR, no further run: the hung run still holds the processes');
            return;
          }
          try {
            await withDeadline(cluster.recover(), RECOVERY_DEADLINE_MS, 'bringing the processes back');
          } catch (recovery) {
            broken = true;
            const message = ExplorerError.wrap(recovery, 'bringing the processes back').message;
            explorerErrors.push({ run: runs, message });
            options.onProgress?.(`  EXPLORER ERROR, no further run: ${message}`);
          }
          return;
        }
        const { world, played, violations: found } = result;
        answersChecked += world.history.answersChecked;
        answersPerRun.push(world.history.answersChecked);
        lostAsDocumented += world.lostAsDocumented.length;
        violations += found.length;
        options.onProgress?.(
          `run ${runs}${failingRuns.length > 0 && !options.keepGoing ? ' (shrinking)' : ''}: ${saleName}, ${played} commands, ${world.history.answersChecked} answers, ${found.length} violations${
            found.length > 0 ? ` (${[...new Set(found.map((violation) => violation.invariant))].join(', ')})` : ''
          }, faults ${injected(faults, faultsBefore)} (so far ${total(faults)}), ${Math.round((Date.now() - started) / 1000)} s`,
        );
        options.onProgress?.(`  answers: ${answersByStatus(world.history.operations)}`);
        for (const lost of world.lostAsDocumented) options.onProgress?.(`  lost as the setting allows: ${lost}`);
        if (found.length === 0) return;
        failingRuns.push({ run: runs, invariants: [...new Set(found.map((violation) => violation.invariant))] });
        lastFailingRun = { violations: found, history: world.history.operations.map(describe), sale: saleName };
        if (!options.keepGoing) throw new ViolationFound(found);
        for (const violation of found) options.onProgress?.(`  ${violation.invariant}: ${violation.detail}`);
        // Going on: the run's schedule and history stay in the working directory, kept for them.
        const file = join(cluster.dir, `run-${runs}.history`);
        writeFileSync(file, [...schedule.toString().split(/,(?![^(]*\))/), '', ...lastFailingRun.history].join('\n'));
        keepDirectory = true;
        options.onProgress?.(`  schedule and history: ${file}`);
      },
    );
    const details = await fc.check(property, {
      numRuns: options.runs,
      seed: options.seed,
      path: options.path,
      // Each shrink attempt replays a whole schedule on real processes: bounded.
      ...(options.maxShrinks === 0 ? { endOnFailure: true } : {}),
    });
    const summary: ExplorerSummary = {
      runs,
      faults,
      answersChecked,
      answersPerRun,
      sales,
      lostAsDocumented,
      violations,
      failingRuns,
      explorerErrors,
      seed: details.seed,
      elapsedMs: Date.now() - started,
    };
    if (explorerErrors.length > 0) keepDirectory = true;
    if (details.failed && details.counterexample && details.counterexamplePath !== null) {
      keepDirectory = true;
      const printed = String((details.counterexample as unknown[])[0]);
      const replayPath = /replayPath="([^"]*)"/.exec(printed)?.[1];
      summary.failure = {
        seed: details.seed,
        path: details.counterexamplePath,
        replayPath,
        shrinks: details.numShrinks,
        schedule: printed
          .replace(/\s*\/\*replayPath=.*\*\/\s*$/, '')
          .split(/,(?![^(]*\))/)
          .map((line) => line.trim())
          .filter(Boolean),
        violations: lastFailingRun?.violations ?? [
          { invariant: 'run', detail: String(details.errorInstance ?? 'the run failed') },
        ],
        history: lastFailingRun?.history ?? [],
        sale: lastFailingRun?.sale ?? '?',
        workingDirectory: cluster.dir,
      };
    }
    return summary;
  } finally {
    await cluster.stop();
    if (!keepDirectory) cluster.removeWorkingDirectory();
  }
}

async function adminToken(cluster: SystemUnderTest): Promise<string> {
  const response = await fetch(`${cluster.apiUrls[0]}/api/auth/admin`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ password: cluster.adminPassword }),
  });
  if (response.status !== 201) throw new ExplorerError(`admin sign-in answered ${response.status}`);
  return ((await response.json()) as { token: string }).token;
}

function total(faults: Map<string, number>): number {
  return [...faults.values()].reduce((sum, n) => sum + n, 0);
}

/** The faults injected since `before`, by kind: `redis-kill 2, mysql-slow 1` (or `none`). */
function injected(faults: Map<string, number>, before: Map<string, number>): string {
  const kinds = [...faults]
    .map(([kind, n]) => [kind, n - (before.get(kind) ?? 0)] as const)
    .filter(([, n]) => n > 0)
    .map(([kind, n]) => `${kind} ${n}`);
  return kinds.join(', ') || 'none';
}

function roomLabel(room: RoomSettings): string {
  return `${room.admitPerSecond}/s, cap ${room.maxShopping ?? '-'}, pass ${room.passSeconds} s`;
}
