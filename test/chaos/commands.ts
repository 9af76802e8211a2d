import type { SaleStrategy } from '@flash-sale/contract';
import fc from 'fast-check';
import { adminAction } from './admin-actions';
import { API_INSTANCES, ChaosCluster } from './cluster';
import { crowd } from './crowd';
import { ExplorerError, stepTo } from './explorer-error';
import { widerFaultCommands } from './faults/nemesis';
import { networkFaultCommands } from './faults/network';
import { clientCommands } from './client-commands';
import { roomAdminCommand } from './room-commands';
import type { SystemUnderTest } from './system-under-test';
import type { RunWorld } from './world';

/** The nemesis' repertoire; `--faults` picks among them. */
export const FAULT_KINDS = [
  'redis-kill',
  'redis-restart-empty',
  'redis-flap',
  'api-kill',
  'worker-kill',
  'worker-pause',
  'mysql-pause',
  'reply-lost',
  'redis-restore-older',
  'replica-promote-lagging',
  'clock-skew',
  'mysql-slow',
  'lock-holder-pause',
  'api-restart',
  'redis-snapshots',
  // Not a fault: an admin's end, reopen, edit or preload of the sale, drawn like one (test/chaos/admin-actions.ts).
  'admin',
  // The machines world's (faults/network.ts).
  'machine-isolate',
  'network-split',
  'link-cut',
  'link-cut-one-way',
  'master-cut-off',
  'mysql-failover',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** The faults of the machines world (docs/chaos.md "Worlds"): the network's, a MySQL failover, and the admin's actions. */
export const MACHINES_WORLD_FAULT_KINDS = [
  'machine-isolate',
  'network-split',
  'link-cut',
  'link-cut-one-way',
  'master-cut-off',
  'mysql-failover',
  'admin',
] as const satisfies readonly FaultKind[];

/** The faults of the one-machine world: every other kind, and the admin's actions. */
export const LOCAL_WORLD_FAULT_KINDS: readonly FaultKind[] = FAULT_KINDS.filter(
  (kind) => kind === 'admin' || !(MACHINES_WORLD_FAULT_KINDS as readonly FaultKind[]).includes(kind),
);

/** What the generator knows of the system: which faults are in force (commands that need another state wait). */
export interface Model {
  redisDown: boolean;
  workerPaused: boolean;
  mysqlPaused: boolean;
  /** An admin asked to end the sale (whatever the answer) and nobody reopened it since. */
  endRequested: boolean;
  /** This run's sale's strategy (lock-holder-pause needs redis-lock). */
  strategy: SaleStrategy;
  /** A copy of Redis' file was taken (redis-restore-older restores it). */
  snapshotTaken: boolean;
  replicaLagging: boolean;
  clockSkewed: boolean;
  mysqlSlow: boolean;
  /** Network faults in force (the machines world): a heal undoes them all. */
  networkFaults: number;
  /** The MySQL primary was failed over this run: no replica to promote until the run's end restores one. */
  mysqlFailedOver: boolean;
}

export interface Real {
  world: RunWorld;
  cluster: SystemUnderTest;
  /** Faults injected, by kind, over the whole exploration. */
  faults: Map<string, number>;
  /** Commands this run has played so far. */
  played: number;
}

export type ChaosCommand = fc.AsyncCommand<Model, Real>;

/** The one-machine world's processes, the hands of its faults (a fault is drawn only in its own world). */
export function local(real: Real): ChaosCluster {
  if (!(real.cluster instanceof ChaosCluster)) {
    throw new ExplorerError('a fault of the one-machine world was drawn in another world');
  }
  return real.cluster;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export function count(real: Real, kind: string): void {
  real.faults.set(kind, (real.faults.get(kind) ?? 0) + 1);
}

/** After Redis comes back, the API instances reconnect on their own; wait a little for them so the next purchase sees Redis. */
export async function letApisReconnect(real: Real): Promise<void> {
  if (local(real).mysqlPaused) return sleep(500);
  await Promise.all([...Array(API_INSTANCES).keys()].map((index) => local(real).waitForApiReady(index, 3_000)));
}

/** A command whose check is a predicate on the model and whose run is an async action. */
export function command(
  label: string,
  check: (model: Readonly<Model>) => boolean,
  run: (model: Model, real: Real) => Promise<void>,
): ChaosCommand {
  return {
    check,
    run: async (model, real) => {
      real.played += 1;
      stepTo(label);
      await run(model, real);
    },
    toString: () => label,
  };
}

const always = () => true;
const api = fc.integer({ min: 0, max: API_INSTANCES - 1 });
const pick = fc.nat({ max: 1_000 });

export type Weighted = { arbitrary: fc.Arbitrary<ChaosCommand>; weight: number };

/** `crowd(n)`: n concurrent purchase attempts (test/chaos/crowd.ts), n drawn up to `crowdSize`. */
function crowdCommand(crowdSize: number): Weighted {
  return {
    weight: 2,
    arbitrary: fc
      .tuple(fc.integer({ min: Math.ceil(crowdSize / 2), max: crowdSize }), fc.nat())
      .map(([n, seed]) => command(`crowd(${n}, seed ${seed})`, always, (_m, real) => crowd(real.world, n, seed))),
  };
}

/** How long a crowd runs before the fault it surrounds: its buyers signed in, its first attempts in flight. */
const CROWD_LEAD_MS = 300;

/**
 * A fault (or admin action) with a crowd around it: `size` attempts start with it and go on after it,
 * so purchases are in flight as a process dies, pauses or comes back. The crowd's seed is the command's
 * place in the schedule.
 */
function withCrowd(fault: ChaosCommand, size: number): ChaosCommand {
  return {
    check: (model) => fault.check(model),
    run: async (model, real) => {
      const around = crowd(real.world, size, real.played);
      await sleep(CROWD_LEAD_MS);
      await fault.run(model, real);
      await around;
    },
    toString: () => `${fault.toString()}+crowd(${size})`,
  };
}

/** Admin actions, while everything is up or while a fault is in force: end now, reopen, edit, preload. */
function adminCommands(): fc.Arbitrary<ChaosCommand> {
  const kinds = fc.constantFrom('end', 'end', 'end', 'reopen', 'reopen', 'reopen', 'edit', 'preload');
  return fc.tuple(kinds, api, fc.nat({ max: 999 })).map(([kind, a, serial]) =>
    command(
      `admin${kind[0]!.toUpperCase()}${kind.slice(1)}(api${a})`,
      (m) => kind !== 'reopen' || m.endRequested,
      async (m, real) => {
        count(real, `admin-${kind}`);
        await adminAction(real.world, kind, a, serial);
        if (kind === 'end') m.endRequested = true;
        if (kind === 'reopen') m.endRequested = false;
      },
    ),
  );
}

/**
 * A process paused (only while it runs) and resumed (only while it is paused, after a delay drawn from
 * `resumeAfterMs`), the model's `flag` saying which.
 */
function pauseAndResume(
  flag: 'workerPaused' | 'mysqlPaused',
  pause: { label: string; kind: FaultKind; run: (real: Real) => void },
  resume: { label: (afterMs: number) => string; run: (real: Real) => void; afterMs: fc.Arbitrary<number> },
): fc.Arbitrary<ChaosCommand>[] {
  return [
    fc.constant(
      command(
        pause.label,
        (m) => !m[flag],
        async (m, real) => {
          count(real, pause.kind);
          pause.run(real);
          m[flag] = true;
        },
      ),
    ),
    resume.afterMs.map((afterMs) =>
      command(
        resume.label(afterMs),
        (m) => m[flag],
        async (m, real) => {
          await sleep(afterMs);
          resume.run(real);
          m[flag] = false;
        },
      ),
    ),
  ];
}

/** The nemesis: each enabled fault kind, and its end where a fault lasts. */
function faultCommands(
  kinds: ReadonlySet<FaultKind>,
  perUserLimit: number,
  rooms: boolean,
): fc.Arbitrary<ChaosCommand>[] {
  const arbitraries: fc.Arbitrary<ChaosCommand>[] = [];
  const constant = (cmd: ChaosCommand) => fc.constant(cmd);
  if (kinds.has('redis-kill') || kinds.has('redis-restart-empty')) {
    arbitraries.push(
      constant(
        command(
          'redisKill()',
          (m) => !m.redisDown,
          async (m, real) => {
            count(real, 'redis-kill');
            await local(real).killRedis();
            m.redisDown = true;
          },
        ),
      ),
    );
    const empties = kinds.has('redis-restart-empty') ? [false, true] : [false];
    arbitraries.push(
      fc.constantFrom(...empties).map((empty) =>
        command(
          empty ? 'redisRestartEmpty()' : 'redisRestartFromAof()',
          (m) => m.redisDown,
          async (m, real) => {
            if (empty) {
              count(real, 'redis-restart-empty');
              real.world.noteDataLoss('redis-restart-empty');
            }
            await local(real).startRedis({ empty });
            m.redisDown = false;
            await letApisReconnect(real);
          },
        ),
      ),
    );
  }
  if (kinds.has('redis-flap')) {
    arbitraries.push(
      fc.integer({ min: 50, max: 900 }).map((gapMs) =>
        command(
          `redisFlap(${gapMs}ms)`,
          (m) => !m.redisDown,
          async (_m, real) => {
            count(real, 'redis-flap');
            await local(real).killRedis();
            await sleep(gapMs);
            await local(real).startRedis({ empty: false });
          },
        ),
      ),
    );
  }
  if (kinds.has('api-kill')) {
    arbitraries.push(
      api.map((a) =>
        command(`apiKill(api${a})`, always, async (_m, real) => {
          count(real, 'api-kill');
          await local(real).killApi(a);
          local(real).startApi(a);
          await local(real).waitForApi(a, 15_000);
        }),
      ),
    );
  }
  if (kinds.has('worker-kill')) {
    arbitraries.push(
      constant(
        command('workerKill()', always, async (m, real) => {
          count(real, 'worker-kill');
          await local(real).killWorker();
          local(real).startWorker();
          m.workerPaused = false;
        }),
      ),
    );
  }
  if (kinds.has('worker-pause')) {
    arbitraries.push(
      ...pauseAndResume(
        'workerPaused',
        { label: 'workerPause()', kind: 'worker-pause', run: (real) => local(real).pauseWorker() },
        { label: () => 'workerResume()', run: (real) => local(real).resumeWorker(), afterMs: fc.constant(0) },
      ),
    );
  }
  if (kinds.has('mysql-pause')) {
    arbitraries.push(
      ...pauseAndResume(
        'mysqlPaused',
        { label: 'mysqlPause()', kind: 'mysql-pause', run: (real) => local(real).pauseMysql() },
        {
          label: (afterMs) => `mysqlResume(after ${afterMs}ms)`,
          run: (real) => local(real).resumeMysql(),
          afterMs: fc.integer({ min: 0, max: 2_000 }),
        },
      ),
    );
  }
  // Twice a fault's share: an end meets an outage often enough, and the crowd then tells if it holds.
  if (kinds.has('admin')) arbitraries.push(adminCommands(), adminCommands());
  if (kinds.has('admin') && rooms) arbitraries.push(roomAdminCommand());
  if (kinds.has('reply-lost')) {
    const restartsRedis = kinds.has('redis-kill') || kinds.has('redis-restart-empty');
    const purchase = fc.tuple(pick, fc.integer({ min: 1, max: perUserLimit }), api);
    arbitraries.push(
      purchase.map(([b, q, a]) =>
        command(
          `buyWithReplyLost(buyer#${b}, x${q}, api${a})`,
          (m) => !m.redisDown,
          async (_m, real) => {
            // Counted only when Redis really ran the command and its reply was lost.
            if (await real.world.buy(b, q, a, {})) count(real, 'reply-lost');
          },
        ),
      ),
      // Redis dies right after running the reservation, before its reply leaves: the API's client
      // cannot resend it, and the purchase meets the outage with a command whose fate it does not know.
      purchase.map(([b, q, a]) =>
        command(
          `buyThenRedisCrash(buyer#${b}, x${q}, api${a})`,
          (m) => !m.redisDown,
          async (m, real) => {
            let crash: Promise<void> | undefined;
            const dropped = await real.world.buy(b, q, a, { onDrop: () => (crash = local(real).killRedis()) });
            await crash;
            if (!dropped) return;
            count(real, 'reply-lost');
            count(real, 'redis-kill');
            if (restartsRedis) m.redisDown = true;
            else {
              // No restart command in this schedule's repertoire: Redis comes back from its file now.
              await local(real).startRedis({ empty: false });
              await letApisReconnect(real);
            }
          },
        ),
      ),
    );
  }
  arbitraries.push(...widerFaultCommands(kinds), ...networkFaultCommands(kinds));
  return arbitraries;
}

/**
 * The generator of a run's schedule: client actions interleaved with faults, about one command in
 * four a fault or a fault's end.
 */
export function scheduleArbitrary(
  kinds: ReadonlySet<FaultKind>,
  perUserLimit: number,
  maxCommands: number,
  replayPath: string | undefined,
  maxShrinks: number,
  /** Most attempts of one `crowd(n)` command; 0: no crowd commands. */
  crowdSize = 0,
  /** Room sales may be drawn: the room's client actions and the admin's changes of the room join the schedule. */
  rooms = false,
): fc.Arbitrary<Iterable<ChaosCommand>> {
  const clients = [...clientCommands(perUserLimit, kinds, rooms), ...(crowdSize > 0 ? [crowdCommand(crowdSize)] : [])];
  const faults = faultCommands(kinds, perUserLimit, rooms).map((fault) =>
    crowdSize > 0 ? fault.map((cmd) => withCrowd(cmd, Math.ceil(crowdSize / 2))) : fault,
  );
  const weighted = fc.oneof(
    ...clients.map(({ arbitrary, weight }) => ({ arbitrary, weight: 2 * weight })),
    // The faults share about a third of the weight, however many kinds are on.
    ...faults.map((arbitrary) => ({ arbitrary, weight: Math.ceil(16 / faults.length) })),
  );
  return fc.limitShrink(fc.noBias(fc.commands([weighted], { maxCommands, size: 'max', replayPath })), maxShrinks);
}

export function initialModel(strategy: SaleStrategy = 'redis-lua'): Model {
  return {
    redisDown: false,
    workerPaused: false,
    mysqlPaused: false,
    endRequested: false,
    strategy,
    snapshotTaken: false,
    replicaLagging: false,
    clockSkewed: false,
    mysqlSlow: false,
    networkFaults: 0,
    mysqlFailedOver: false,
  };
}
