import { rmSync } from 'node:fs';
import { machinesAvailable } from '../../scripts/lib/machines.mjs';
import { explore, type ExplorerOptions, type ExplorerSummary } from '../chaos/explorer';

const available = machinesAvailable();
const describeWithMachines = available.ok ? describe : describe.skip;
if (!available.ok) console.warn(`explorer-partitions.int.spec skipped: ${available.why}`);

/**
 * The schedule of seed 1, path 0 in the explorer's machines world (docs/chaos.md "Worlds"): a crowd buys
 * while the Redis machine serving the sale's bucket is cut off from the other Redis machines and the
 * workers for 11 s, the APIs still reaching its master, until its replica is promoted on the majority's
 * side. One bucket and no room: every purchase of the crowd goes to the master cut off.
 */
const MINORITY_MASTER: Omit<ExplorerOptions, 'appEnv'> = {
  world: 'machines',
  seed: 1,
  path: '0',
  runs: 1,
  budgetMs: 150_000,
  maxShrinks: 0,
  faults: ['master-cut-off', 'admin'],
  maxCommands: 30,
  stock: 60,
  perUserLimit: 3,
  buckets: [1],
  strategies: ['redis-lua'],
  rooms: ['none'],
  crowd: 80,
};

const invariantsBroken = (summary: ExplorerSummary) => [
  ...new Set(summary.failingRuns.flatMap((run) => run.invariants)),
];

/**
 * A partition the explorer found, kept in CI: the deployment as machines on a real network, its links cut
 * as a network fails. The loss is the one the Redis Cluster specification describes (and Jepsen showed):
 * the master in the minority takes writes until its node timeout, and they are gone when it rejoins.
 */
describeWithMachines('the explorer on machines: a Redis master cut off in a minority (seeded)', () => {
  it('with the durable acknowledgement on (the default wherever replicas exist), every 202 is kept', async () => {
    const summary = await explore({ ...MINORITY_MASTER });
    expect(summary.explorerErrors).toEqual([]);
    expect(summary.faults.get('master-cut-off')).toBeGreaterThanOrEqual(1);
    expect(invariantsBroken(summary)).toEqual([]);
    expect(summary.violations).toBe(0);
  }, 240_000);

  // The loss needs the majority to promote the replica while the cut holds (node timeout, then an
  // election): on a slow machine the schedule's 11 s may end first, and the old master keeps its writes.
  // So the same schedule is played up to three times, each on a fresh deployment.
  it('with DURABLE_ACK=off, a 202 the cut-off master gave is lost: the explorer finds it', async () => {
    let broken: string[] = [];
    for (let attempt = 1; attempt <= 3 && broken.length === 0; attempt++) {
      const summary = await explore({ ...MINORITY_MASTER, appEnv: { DURABLE_ACK: 'off' } });
      // A failure keeps the deployment's folder for whoever reads it; here it is what the test expects.
      if (summary.failure) rmSync(summary.failure.workingDirectory, { recursive: true, force: true });
      expect(summary.explorerErrors).toEqual([]);
      broken = invariantsBroken(summary);
    }
    expect(broken).toContain('every 202/201 is written without a replay');
  }, 600_000);
});
