import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { SaleStrategy } from '@flash-sale/contract';
import type { FaultKind } from './commands';
import { explore, type ExplorerOptions, type ExplorerSummary } from './explorer';

const API_ENTRY = join(__dirname, '..', '..', 'apps', 'api', 'dist', 'main.js');

/** The failure as `npm run chaos` prints it, so a red test says how to replay it. */
function report(summary: ExplorerSummary): string {
  const failure = summary.failure;
  if (!failure) return 'no violation';
  return [
    `seed ${failure.seed}, path ${failure.path}${failure.replayPath ? `, replay path ${failure.replayPath}` : ''}`,
    `schedule (${failure.shrinks > 0 ? 'shrunk' : 'as generated'}):`,
    ...failure.schedule.map((line) => `  ${line}`),
    'violations:',
    ...failure.violations.map((violation) => `  ${violation.invariant}: ${violation.detail}`),
    'history:',
    ...failure.history.map((line) => `  ${line}`),
  ].join('\n');
}

/**
 * One run of the explorer on the schedule a seed and path draw, on the sale these cases share. A red run
 * reports the schedule as generated: shrinking is for `npm run chaos`.
 */
function exploreOnce(
  options: Omit<ExplorerOptions, 'runs' | 'budgetMs' | 'maxShrinks' | 'stock' | 'perUserLimit'>,
): Promise<ExplorerSummary> {
  return explore({ runs: 1, budgetMs: 100_000, maxShrinks: 0, stock: 12, perUserLimit: 3, ...options });
}

/** The kinds among `kinds` that the run never injected. */
function neverInjected(summary: ExplorerSummary, kinds: readonly string[]): string[] {
  return kinds.filter((kind) => !summary.faults.get(kind));
}

/**
 * For the cases whose sale's buckets are part of the case: the second pass of npm test
 * (TEST_SALE_BUCKETS=3) skips them.
 */
const itOnOwnBuckets = process.env['TEST_SALE_BUCKETS'] ? it.skip : it;

/**
 * A few seeded runs of the fault-schedule explorer (docs/chaos.md) on the built API, worker, a private
 * Redis and MariaDB. The long exploration is `npm run chaos`; these seeds keep the schedules that
 * once broke an invariant in every CI run.
 */
describe('the fault-schedule explorer, seeded (real processes)', () => {
  beforeAll(() => {
    if (!existsSync(API_ENTRY)) throw new Error(`${API_ENTRY} is missing: build first (npm test does)`);
  });

  // Each case replays one schedule the explorer generated (seed + path: the run's index) that broke an
  // invariant on the build before the fixes; the whole exploration is `npm run chaos -- --seed 2`.
  const cases: { name: string; seed: number; path: string; faults: FaultKind[] }[] = [
    {
      name: 'a token minted while Redis was down, bought in Redis, replayed in the next outage: one order, the promised one',
      seed: 2,
      path: '28',
      faults: ['redis-kill', 'worker-pause'],
    },
    {
      name: 'a buyer with an unwritten reservation buys more units through the fallback: limit in units, the 202 kept',
      seed: 2,
      path: '8',
      faults: ['redis-kill', 'worker-pause'],
    },
  ];

  it.each(cases)(
    '$name (seed $seed, path $path)',
    async ({ seed, path, faults }) => {
      const summary = await exploreOnce({
        seed,
        path,
        faults,
        maxCommands: 40,
        buckets: [Number(process.env['TEST_SALE_BUCKETS'] ?? 1)],
        strategies: ['redis-lua'],
      });
      expect(summary.runs).toBe(1);
      expect(summary.answersChecked).toBeGreaterThan(0);
      expect(report(summary)).toBe('no violation');
    },
    180_000,
  );

  // The wider nemesis (test/chaos/faults): each new fault kind at least once, on real processes, on
  // schedules the explorer generated that inject it (the test asserts they did) and keep every promise.
  const wider: {
    name: string;
    seed: number;
    path: string;
    faults: FaultKind[];
    strategy: SaleStrategy;
    buckets: number;
  }[] = [
    {
      name: 'redis-lua on 3 buckets: a lagging replica promoted, Redis restored from a copy of the run start, then buyers over a slow MySQL',
      seed: 2,
      path: '0',
      faults: ['redis-restore-older', 'replica-promote-lagging', 'mysql-slow'],
      strategy: 'redis-lua',
      buckets: 3,
    },
    {
      name: 'redis-lock: a lock holder paused past its TTL, an API instance and the worker on a skewed clock, MySQL slow',
      seed: 3,
      path: '0',
      faults: ['lock-holder-pause', 'clock-skew', 'mysql-slow'],
      strategy: 'redis-lock',
      buckets: 1,
    },
  ];

  // Admin actions among the faults, with the crowd and the sold-out trickle on: every answer judged when
  // given (no sale after the end MySQL records, a SOLD_OUT is true, a promised token answered alike).
  itOnOwnBuckets(
    'redis-lua: an admin ends the sale while Redis is down and after, reopens it, Redis restored from an older copy, a crowd throughout (seed 11, path 0)',
    async () => {
      const summary = await exploreOnce({
        seed: 11,
        path: '0',
        faults: ['admin', 'redis-kill', 'worker-pause', 'redis-restore-older'],
        maxCommands: 20,
        buckets: [1, 3],
        strategies: ['redis-lua'],
        crowd: 40,
      });
      expect(summary.runs).toBe(1);
      expect(summary.answersChecked).toBeGreaterThan(100);
      expect(neverInjected(summary, ['admin-end', 'admin-reopen', 'redis-kill', 'redis-restore-older'])).toEqual([]);
      expect(report(summary)).toBe('no violation');
    },
    180_000,
  );

  // Found by `npm run chaos` with every fault kind: the sale ends while the worker is down, then a replica
  // that lagged is promoted. The copy it holds lacks reservations MySQL wrote and counts units MySQL no
  // longer leases to it; it must be replaced like a live sale's stale copy, or the books never close.
  itOnOwnBuckets(
    'redis-lua on 3 buckets: worker killed, the admin ends the sale, a lagging replica promoted after the end (seed 1147732657, path 7)',
    async () => {
      const summary = await exploreOnce({
        seed: 1147732657,
        path: '7',
        // The whole list as `npm run chaos` had it: the schedule is drawn from it.
        faults: [
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
          'admin',
        ],
        maxCommands: 30,
        buckets: [1, 3],
        strategies: ['redis-lua', 'redis-lock', 'db-segmented'],
        crowd: 80,
      });
      expect(summary.runs).toBe(1);
      expect(neverInjected(summary, ['worker-kill', 'admin-end', 'replica-promote-lagging'])).toEqual([]);
      expect(report(summary)).toBe('no violation');
    },
    180_000,
  );

  itOnOwnBuckets.each(wider)(
    '$name (seed $seed, path $path)',
    async ({ seed, path, faults, strategy, buckets }) => {
      const summary = await exploreOnce({
        seed,
        path,
        faults,
        maxCommands: 30,
        buckets: [buckets],
        strategies: [strategy],
      });
      expect(summary.runs).toBe(1);
      expect(summary.answersChecked).toBeGreaterThan(0);
      expect(neverInjected(summary, faults)).toEqual([]);
      expect(report(summary)).toBe('no violation');
    },
    180_000,
  );

  // Each new kind of operation in the explorer's world, on a short schedule the explorer generated that
  // draws it (the test asserts it was played), so that every CI run meets it at least once.
  const newOperations: {
    name: string;
    options: Pick<ExplorerOptions, 'seed' | 'path' | 'faults' | 'strategies' | 'maxCommands'> &
      Partial<Pick<ExplorerOptions, 'rooms' | 'crowd'>>;
    played: (summary: ExplorerSummary) => string[];
  }[] = [
    {
      name: 'a room sale: joins, polls as advised, an admission, a pass used late, the admin changes the room, a crowd through the room',
      options: {
        seed: 42,
        path: '1',
        faults: ['admin'],
        strategies: ['redis-lua'],
        maxCommands: 12,
        rooms: ['room'],
        crowd: 20,
      },
      played: (summary) => (summary.faults.get('admin-room') ? [] : ['admin-room']),
    },
    {
      name: 'an API restarted cleanly (SIGTERM, its startup warm-up) between a token and its purchase: no row in MySQL the run did not make',
      options: { seed: 2, path: '1', faults: ['api-restart'], strategies: ['redis-lua'], maxCommands: 10 },
      played: (summary) => (summary.faults.get('api-restart') ? [] : ['api-restart']),
    },
    {
      name: 'copies of Redis taken between a payment, a token and its purchase, Redis restored from one of them',
      options: { seed: 5, path: '1', faults: ['redis-snapshots'], strategies: ['redis-lua'], maxCommands: 12 },
      played: (summary) => (summary.faults.get('redis-restore-older') ? [] : ['redis-restore-older']),
    },
    {
      name: 'db-batched: an order cancelled, its token replayed after (the order answered as it is), the worker killed around it',
      options: { seed: 7, path: '1', faults: ['worker-kill'], strategies: ['db-batched'], maxCommands: 12 },
      played: (summary) => (summary.sales.get('db-batched/1') ? [] : ['a db-batched sale']),
    },
  ];

  itOnOwnBuckets.each(newOperations)(
    '$name',
    async ({ options, played }) => {
      const summary = await exploreOnce({ buckets: [1], ...options });
      expect(summary.runs).toBe(1);
      expect(summary.explorerErrors).toEqual([]);
      expect(played(summary)).toEqual([]);
      expect(report(summary)).toBe('no violation');
    },
    180_000,
  );
});
