import fc from 'fast-check';
import type { RowDataPacket } from 'mysql2/promise';
import { API_INSTANCES } from '../cluster';
import {
  type ChaosCommand,
  command,
  count,
  type FaultKind,
  letApisReconnect,
  local,
  type Model,
  type Real,
} from '../commands';
import { ExplorerError } from '../explorer-error';
import { HOLDER_LOCK_TTL_MS, PausedLockHolder } from './lock-holder';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const api = fc.integer({ min: 0, max: API_INSTANCES - 1 });
const pick = fc.nat({ max: 1_000 });
const always = () => true;

/** A copy of Redis' data taken now, as it is (redis-restore-older restores one of them). */
export function redisSnapshot(): fc.Arbitrary<ChaosCommand> {
  return fc.constant(
    command(
      'redisSnapshot()',
      (m) => !m.redisDown,
      async (m, real) => {
        local(real).snapshotRedis();
        m.snapshotTaken = true;
      },
    ),
  );
}

/**
 * The faults that give the explorer the world operators run (docs/chaos.md): Redis restarted from an
 * older copy of its data, a lagging replica promoted, skewed clocks, a slow MySQL, a redis-lock holder
 * paused past its lock's TTL. Each is a pair of commands where it lasts (its start, its end), so that
 * client actions fall in between.
 */
export function widerFaultCommands(kinds: ReadonlySet<FaultKind>): fc.Arbitrary<ChaosCommand>[] {
  const arbitraries: fc.Arbitrary<ChaosCommand>[] = [];
  const restoreAmongCopies = kinds.has('redis-snapshots');
  if (kinds.has('redis-restore-older') || restoreAmongCopies) {
    arbitraries.push(
      // The copy a backup, an RDB snapshot or an `everysec` file holds: what Redis had at this moment.
      redisSnapshot(),
      // With `redis-snapshots`, copies are taken often (a client-weighted command) and the restore picks one.
      (restoreAmongCopies ? pick : fc.constant(undefined)).map((copy) =>
        command(
          copy === undefined ? 'redisRestoreOlder()' : `redisRestoreOlder(copy#${copy})`,
          (m) => m.snapshotTaken,
          async (m, real) => {
            count(real, 'redis-restore-older');
            real.world.noteDataLoss('redis-restore-older');
            await local(real).restoreRedisFromSnapshot(copy);
            m.redisDown = false;
            m.snapshotTaken = copy !== undefined;
            await letApisReconnect(real);
          },
        ),
      ),
    );
  }
  if (kinds.has('api-restart')) {
    arbitraries.push(
      // A deployment's restart: SIGTERM, a new process, its startup warm-up before it says ready.
      api.map((a) =>
        command(`apiRestart(api${a})`, always, async (m, real) => {
          count(real, 'api-restart');
          // With MySQL stopped, a new process cannot start (it gives up connecting and exits, as a
          // supervisor expects); the end of the run's faults starts it again.
          if (!(await local(real).restartApi(a)) && !m.mysqlPaused) {
            throw new ExplorerError(`API ${a} restarted cleanly was not ready within 30 s`);
          }
        }),
      ),
    );
  }
  if (kinds.has('replica-promote-lagging')) {
    arbitraries.push(
      fc.constant(
        command(
          'replicaStartLagging()',
          (m) => !m.redisDown && !m.replicaLagging,
          async (m, real) => {
            await local(real).startLaggingReplica();
            m.replicaLagging = local(real).replicaLagging;
          },
        ),
      ),
      fc.constant(
        command(
          'promoteLaggingReplica()',
          (m) => m.replicaLagging,
          async (m, real) => {
            count(real, 'replica-promote-lagging');
            real.world.noteDataLoss('replica-promote-lagging');
            await local(real).promoteLaggingReplica();
            m.replicaLagging = false;
            m.redisDown = false;
            await letApisReconnect(real);
          },
        ),
      ),
    );
  }
  if (kinds.has('clock-skew')) {
    const offset = fc.integer({ min: 1, max: 5 }).chain((s) => fc.constantFrom(s, -s));
    arbitraries.push(
      fc.tuple(api, offset).map(([a, seconds]) =>
        command(
          `clockSkew(api${a} and worker, ${seconds > 0 ? '+' : ''}${seconds}s)`,
          (m) => !m.clockSkewed,
          async (m, real) => {
            count(real, 'clock-skew');
            await local(real).restartApiWithClock(a, seconds);
            await local(real).restartWorkerWithClock(seconds);
            m.clockSkewed = true;
            m.workerPaused = false;
          },
        ),
      ),
      fc.constant(
        command(
          'clockUnskew()',
          (m) => m.clockSkewed,
          async (m, real) => {
            for (let index = 0; index < API_INSTANCES; index++) await local(real).restartApiWithClock(index, 0);
            await local(real).restartWorkerWithClock(0);
            m.clockSkewed = false;
            m.workerPaused = false;
          },
        ),
      ),
    );
  }
  if (kinds.has('mysql-slow')) {
    arbitraries.push(
      // Each way: a round trip costs twice this, a purchase's few statements some seconds.
      fc.integer({ min: 100, max: 750 }).map((ms) =>
        command(
          `mysqlSlow(${ms}ms each way)`,
          (m) => !m.mysqlSlow,
          async (m, real) => {
            count(real, 'mysql-slow');
            local(real).slowMysql(ms);
            m.mysqlSlow = true;
          },
        ),
      ),
      fc.integer({ min: 0, max: 3_000 }).map((afterMs) =>
        command(
          `mysqlFast(after ${afterMs}ms)`,
          (m) => m.mysqlSlow,
          async (m, real) => {
            await sleep(afterMs);
            local(real).slowMysql(0);
            m.mysqlSlow = false;
          },
        ),
      ),
    );
  }
  if (kinds.has('lock-holder-pause')) {
    arbitraries.push(
      fc.tuple(pick, api).map(([b, a]) =>
        command(
          `lockHolderPause(then buyer#${b} buys via api${a})`,
          (m) => m.strategy === 'redis-lock' && !m.redisDown && !m.mysqlPaused,
          (_m, real) => pauseALockHolder(real, b, a),
        ),
      ),
    );
  }
  return arbitraries;
}

/**
 * At a run's start (its sale loaded, no purchase yet): a copy of Redis' file is taken and a replica
 * starts lagging, so that a restore or a promotion anywhere in the schedule has something older to go
 * back to; the schedule's own `redisSnapshot()` and `replicaStartLagging()` take newer ones.
 */
export async function armWiderFaults(kinds: ReadonlySet<FaultKind>, model: Model, real: Real): Promise<void> {
  if (kinds.has('redis-restore-older') || kinds.has('redis-snapshots')) {
    local(real).snapshotRedis({ fresh: true });
    model.snapshotTaken = true;
  }
  if (kinds.has('replica-promote-lagging')) {
    await local(real).startLaggingReplica();
    model.replicaLagging = local(real).replicaLagging;
  }
}

/**
 * A holder takes the sale's lock and reads the stock, then stops past the lock's TTL; a buyer buys
 * meanwhile (the API takes the lock after it and claims a newer fencing token). Resumed, the holder
 * writes: fenced, its write must not land (a unit taken with no order behind it breaks conservation,
 * which the checker sees). If no newer holder claimed the fence meanwhile, its write would be a sale
 * the run's books know nothing of: it is killed instead, a holder that died in its pause.
 */
async function pauseALockHolder(real: Real, buyerPick: number, apiIndex: number): Promise<void> {
  const { world } = real;
  const cluster = local(real);
  const holding = await PausedLockHolder.lockAndRead(
    { ...cluster.env, REDIS_URL: `redis://127.0.0.1:${cluster.redisPort}`, DATABASE_URL: cluster.databaseUrl },
    world.sale.id,
    5_000,
  );
  if (!holding) return;
  const { holder, fence } = holding;
  count(real, 'lock-holder-pause');
  holder.pause();
  await sleep(HOLDER_LOCK_TTL_MS + 1_000);
  await world.buy(buyerPick, 1, apiIndex);
  const connection = await cluster.mysql();
  try {
    const [[row]] = await connection.query<RowDataPacket[]>('SELECT fence FROM sales WHERE id = ?', [world.sale.id]);
    if (Number(row?.['fence']) > fence) await holder.resumeAndWrite(5_000);
    else await holder.kill();
  } finally {
    await connection.end();
    await holder.kill();
  }
}
