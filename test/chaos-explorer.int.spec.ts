import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { FaultKind } from './chaos/commands';
import { explore, type ExplorerSummary } from './chaos/explorer';

const API_ENTRY = join(__dirname, '..', 'apps', 'api', 'dist', 'main.js');

/** The failure as `npm run chaos` prints it, so a red test says how to replay it. */
function report(summary: ExplorerSummary): string {
  const failure = summary.failure;
  if (!failure) return 'no violation';
  return [
    `seed ${failure.seed}, path ${failure.path}${failure.replayPath ? `, replay path ${failure.replayPath}` : ''}`,
    'shrunk schedule:',
    ...failure.schedule.map((line) => `  ${line}`),
    'violations:',
    ...failure.violations.map((violation) => `  ${violation.invariant}: ${violation.detail}`),
    'history:',
    ...failure.history.map((line) => `  ${line}`),
  ].join('\n');
}

/**
 * A few seeded runs of the fault-schedule explorer (docs/chaos.md) on the built API, worker, a private
 * Redis and MariaDB. The long exploration is `npm run chaos`; these seeds keep the schedules that
 * once broke an invariant in every CI run.
 */
describe('the fault-schedule explorer, seeded (real processes)', () => {
  beforeAll(() => {
    if (!existsSync(API_ENTRY)) throw new Error(`${API_ENTRY} is missing: build first (npm test does)`);
  });

  const cases: { name: string; seed: number; runs: number; faults: FaultKind[] }[] = [
    {
      name: 'Redis outages with the worker paused: one token never makes two orders, every 202 is kept',
      seed: 1,
      runs: 3,
      faults: ['redis-kill', 'worker-pause'],
    },
  ];

  it.each(cases)(
    '$name (seed $seed)',
    async ({ seed, runs, faults }) => {
      const summary = await explore({
        runs,
        seed,
        faults,
        budgetMs: 100_000,
        maxCommands: 40,
        // A red run reports the schedule as generated: shrinking is for `npm run chaos`.
        maxShrinks: 0,
        stock: 12,
        perUserLimit: 3,
      });
      expect(summary.runs).toBeGreaterThan(0);
      expect(summary.answersChecked).toBeGreaterThan(0);
      expect(report(summary)).toBe('no violation');
    },
    180_000,
  );
});
