import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SaleStrategy } from '@flash-sale/contract';
import fc from 'fast-check';
import { check, fetchAudit, readFinalState, type Violation } from './checker';
import { ADMIN_PASSWORD, ChaosCluster } from './cluster';
import { type FaultKind, initialModel, type Model, type Real, scheduleArbitrary } from './commands';
import { SoldOutTrickle } from './crowd';
import { armWiderFaults } from './faults/nemesis';
import { answersByStatus, describe } from './history';
import { SaleWindowSampler } from './sale-window';
import { RunWorld } from './world';

export interface ExplorerOptions {
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
  failure?: Failure;
  seed: number;
  elapsedMs: number;
}

/** How long the system may take to settle after the last fault before that itself is a finding. */
const QUIET_TIMEOUT_MS = 20_000;

const INITIAL_BUYERS = 3;

class ViolationFound extends Error {
  constructor(readonly violations: Violation[]) {
    super(violations.map((violation) => `${violation.invariant}: ${violation.detail}`).join('\n'));
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * The fault-schedule explorer: fast-check generates schedules of client actions and faults (and
 * shrinks a failing one), each run plays one on the real processes against a fresh sale, waits for
 * quiet, settles every unknown answer with a replay, and the checker judges the history.
 */
export async function explore(options: ExplorerOptions): Promise<ExplorerSummary> {
  const started = Date.now();
  const privateMysql = options.faults.includes('mysql-pause');
  const cluster = await ChaosCluster.start({ privateMysql });
  const faults = new Map<string, number>();
  let runs = 0;
  let answersChecked = 0;
  const answersPerRun: number[] = [];
  const sales = new Map<string, number>();
  let lostAsDocumented = 0;
  let violations = 0;
  const failingRuns: ExplorerSummary['failingRuns'] = [];
  let lastFailingRun: { violations: Violation[]; history: string[]; sale: string } | undefined;
  let keepDirectory = false;
  try {
    const adminJwt = await adminToken(cluster);
    const property = fc.asyncProperty(
      scheduleArbitrary(
        new Set(options.faults),
        options.perUserLimit,
        options.maxCommands,
        options.replayPath,
        options.maxShrinks,
        options.crowd ?? 0,
      ),
      // Drawn after the schedule, so a seed's schedules do not depend on these lists.
      fc.noBias(fc.constantFrom(...options.buckets)),
      fc.noBias(fc.constantFrom(...options.strategies)),
      async (schedule, drawnBuckets, strategy) => {
        // The budget: no new run (nor shrink attempt) once spent. Not fast-check's interruptAfterTimeLimit,
        // which returns while a run is still playing, leaving its processes to outlive the cluster's stop.
        if (Date.now() - started >= options.budgetMs) return;
        runs += 1;
        const faultsBefore = new Map(faults);
        await cluster.restoreAll();
        // Buckets are a redis-lua sale's; the others keep their stock in one place.
        const buckets = strategy === 'redis-lua' ? drawnBuckets : 1;
        sales.set(`${strategy}/${buckets}`, (sales.get(`${strategy}/${buckets}`) ?? 0) + 1);
        const sale = await RunWorld.createSale(cluster, adminJwt, {
          stock: options.stock,
          perUserLimit: options.perUserLimit,
          buckets,
          strategy,
        });
        const model: Model = initialModel(strategy);
        const world = new RunWorld(cluster, sale, () => activeFaults(cluster));
        world.adminJwt = adminJwt;
        world.window = new SaleWindowSampler(cluster.databaseUrl, sale.id);
        await world.window.start();
        const trickle = options.crowd ? new SoldOutTrickle(world) : undefined;
        const real: Real = { world, cluster, faults, played: 0 };
        // A few buyers from the start, so that one buyer meets several faults; the schedule adds more.
        for (let index = 0; index < INITIAL_BUYERS; index++) await world.newBuyer(index % 2);
        await armWiderFaults(new Set(options.faults), model, real);
        trickle?.start();
        try {
          await fc.asyncModelRun(() => ({ model, real }), schedule);
          const found = await settleAndCheck(cluster, world, adminJwt, trickle);
          answersChecked += world.history.answersChecked;
          answersPerRun.push(world.history.answersChecked);
          lostAsDocumented += world.lostAsDocumented.length;
          violations += found.length;
          options.onProgress?.(
            `run ${runs}${failingRuns.length > 0 && !options.keepGoing ? ' (shrinking)' : ''}: ${strategy}/${buckets}, ${real.played} commands, ${world.history.answersChecked} answers, ${found.length} violations${
              found.length > 0 ? ` (${[...new Set(found.map((violation) => violation.invariant))].join(', ')})` : ''
            }, faults ${injected(faults, faultsBefore)} (so far ${total(faults)}), ${Math.round((Date.now() - started) / 1000)} s`,
          );
          options.onProgress?.(`  answers: ${answersByStatus(world.history.operations)}`);
          for (const lost of world.lostAsDocumented) options.onProgress?.(`  lost as the setting allows: ${lost}`);
          if (found.length > 0) {
            failingRuns.push({ run: runs, invariants: [...new Set(found.map((violation) => violation.invariant))] });
            lastFailingRun = {
              violations: found,
              history: world.history.operations.map(describe),
              sale: `${strategy}/${buckets}`,
            };
            if (!options.keepGoing) throw new ViolationFound(found);
            for (const violation of found) options.onProgress?.(`  ${violation.invariant}: ${violation.detail}`);
            // Going on: the run's schedule and history stay in the working directory, kept for them.
            const file = join(cluster.dir, `run-${runs}.history`);
            writeFileSync(
              file,
              [...schedule.toString().split(/,(?![^(]*\))/), '', ...lastFailingRun.history].join('\n'),
            );
            keepDirectory = true;
            options.onProgress?.(`  schedule and history: ${file}`);
          }
        } finally {
          await trickle?.stop();
          await world.window.stop();
          await world.close();
        }
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
      seed: details.seed,
      elapsedMs: Date.now() - started,
    };
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

/** The Jepsen final read: everything back up, quiet, every unknown answer settled by a replay, quiet again, judged. */
async function settleAndCheck(
  cluster: ChaosCluster,
  world: RunWorld,
  adminJwt: string,
  trickle: SoldOutTrickle | undefined,
): Promise<Violation[]> {
  const violations: Violation[] = [];
  await cluster.restoreAll();
  if (!(await waitForQuiet(cluster, world, adminJwt))) {
    violations.push({ invariant: 'quiet', detail: `not quiet ${QUIET_TIMEOUT_MS / 1000} s after the last fault` });
  }
  // An unknown answer must be settled one way by a replay; a promised one must replay the same order.
  for (const use of world.unsettledTokens()) {
    for (let attempt = 0; attempt < 3; attempt++) {
      await world.settle(use, attempt % 2);
      if (world.history.ofToken(use.token).at(-1)?.outcome !== 'info') break;
      await sleep(1_000);
    }
    const last = world.history.ofToken(use.token).at(-1);
    if (last?.outcome === 'info') {
      violations.push({ invariant: 'a replay settles an unknown answer', detail: describe(last) });
    }
  }
  // Every promised token replayed on each instance (sold-out traffic still arriving): the same order from both.
  for (const use of [...world.tokens]) {
    if (world.history.ofToken(use.token).some((operation) => operation.outcome === 'ok')) {
      await world.settle(use, 1);
      if (trickle) await world.settle(use, 0);
    }
  }
  await trickle?.stop();
  await waitForQuiet(cluster, world, adminJwt);
  await world.window?.stop();
  const state = await readFinalState(cluster, world, adminJwt);
  return [...violations, ...check(world, state)];
}

/** Quiet: nothing unwritten, nothing in doubt, reconciliation has looked since; false at the deadline. */
async function waitForQuiet(cluster: ChaosCluster, world: RunWorld, adminJwt: string): Promise<boolean> {
  const deadline = Date.now() + QUIET_TIMEOUT_MS;
  while (Date.now() < deadline) {
    const audit = await fetchAudit(cluster, world.sale.id, adminJwt);
    if (audit && audit.ordersByStatus['QUEUED'] === 0 && audit.books.inDoubt === 0) {
      // Two reconciliation intervals, so that a run that raced the last write is followed by a clean one.
      await sleep(2_500);
      return true;
    }
    await sleep(300);
  }
  return false;
}

async function adminToken(cluster: ChaosCluster): Promise<string> {
  const response = await fetch(`${cluster.apiUrls[0]}/api/auth/admin`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ password: ADMIN_PASSWORD }),
  });
  if (response.status !== 201) throw new Error(`admin sign-in answered ${response.status}`);
  return ((await response.json()) as { token: string }).token;
}

function activeFaults(cluster: ChaosCluster): string {
  return [
    !cluster.redisUp && 'redis down',
    cluster.workerPaused && 'worker paused',
    cluster.mysqlPaused && 'mysql paused',
    cluster.mysqlSlow && 'mysql slow',
    cluster.clockSkewed && 'clock skewed',
    cluster.replicaLagging && 'replica lagging',
  ]
    .filter(Boolean)
    .join(', ');
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
