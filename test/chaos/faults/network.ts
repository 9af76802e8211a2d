import { bucketTag } from '@flash-sale/redis';
import fc from 'fast-check';
import { type ChaosCommand, command, count, type FaultKind, type Model, type Real } from '../commands';
import { ExplorerError } from '../explorer-error';
import { MachinesCluster, type NetworkFault } from '../machines-cluster';

const APIS = ['api-1', 'api-2'];
const WORKERS = ['worker-1', 'worker-2'];
const REDIS = ['redis-1', 'redis-2', 'redis-3'];
const MYSQL = ['mysql-1', 'mysql-2'];
/** Every machine a fault may cut. The balancer is reached by every buyer, as the clients reach it: never cut. */
const MACHINES = [...APIS, ...WORKERS, ...REDIS, ...MYSQL];

/**
 * The links that carry traffic: the balancer's to the APIs, the apps' to Redis and MySQL, and the servers'
 * own. Every app has a link to both MySQL machines: the primary's floating address moves between them on
 * a failover, and the APIs read from the replica too (libs/db replica-reads.ts).
 */
const LINKS: [string, string][] = [
  ...APIS.map((api): [string, string] => ['lb', api]),
  ...[...APIS, ...WORKERS].flatMap((app) => [
    ...MYSQL.map((mysql): [string, string] => [app, mysql]),
    ...REDIS.map((redis): [string, string] => [app, redis]),
  ]),
  ['redis-1', 'redis-2'],
  ['redis-2', 'redis-3'],
  ['redis-3', 'redis-1'],
  ['mysql-1', 'mysql-2'],
];

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** How long a fault holds before the schedule goes on (its crowd buying meanwhile); it lasts until a heal. */
const holdMs = fc.integer({ min: 0, max: 9_000 });

/** The kinds a heal undoes. */
const NETWORK_FAULT_KINDS: readonly FaultKind[] = [
  'machine-isolate',
  'network-split',
  'link-cut',
  'link-cut-one-way',
  'master-cut-off',
];

/** At most this many network faults in force at once. */
const MOST_IN_FORCE = 2;

function machines(real: Real): MachinesCluster {
  if (!(real.cluster instanceof MachinesCluster)) {
    throw new ExplorerError('a network fault was drawn outside the machines world');
  }
  return real.cluster;
}

const bothWays = (a: string, b: string): [string, string][] => [
  [a, b],
  [b, a],
];

/** Every link between the two sides cut, both ways. */
function between(sideA: readonly string[], sideB: readonly string[]): [string, string][] {
  return sideA.flatMap((a) => sideB.flatMap((b) => bothWays(a, b)));
}

/** Whether a fault cuts the MySQL machines apart: the primary then holds its commits for its replica. */
function seversMysql(fault: NetworkFault): boolean {
  const [one, other] = MYSQL;
  return (
    fault.isolated.some((machine) => MYSQL.includes(machine)) ||
    fault.cuts.some(([from, to]) => (from === one && to === other) || (from === other && to === one))
  );
}

/**
 * The master cut off is drawn among the Redis machines, or is the sale's as the fault begins (asked of the
 * cluster): the one serving its waiting room in a sale created with one, else its first bucket — where
 * the crowd's polls or purchases go, so that the cut reaches them whatever slot the sale's id hashed to.
 */
const SALE_MASTER = "the sale's master";

/** The Redis machine whose master serves the sale's room (a sale created with one), else its first bucket. */
async function saleMaster(real: Real): Promise<{ machine: string; serving: string }> {
  const { id, buckets, room } = real.world.sale;
  const [key, serving] = room
    ? [`{room:${id}}`, "the sale's room's master"]
    : [`{${bucketTag({ saleId: id, index: 0, count: buckets })}}`, "the sale's bucket's master"];
  return { machine: await machines(real).redisMachineServing(key), serving };
}

/** `redis`'s master cut off from the other Redis machines and the workers; the APIs still reach it. */
function masterCutOff(redis: string, as?: string): NetworkFault {
  const majority = [...REDIS.filter((other) => other !== redis), ...WORKERS];
  return {
    label: `masterCutOff(${as ? `${redis}, ${as}` : redis} | Redis majority and workers)`,
    cuts: between([redis], majority),
    isolated: [],
  };
}

/** A network fault, or how to work it out when it is applied (the machines it cuts depend on the run). */
type FaultOf = NetworkFault | { label: string; resolve(real: Real): Promise<NetworkFault> };

/** A network fault applied, held `hold` ms, and kept in force. */
function networkFault(kind: FaultKind, faultOf: FaultOf, hold: number): ChaosCommand {
  return command(
    `${faultOf.label}, hold ${hold}ms`,
    (m) => m.networkFaults < MOST_IN_FORCE,
    async (m: Model, real: Real) => {
      count(real, kind);
      const fault = 'resolve' in faultOf ? await faultOf.resolve(real) : faultOf;
      if (seversMysql(fault)) real.world.holdMysqlCommits();
      await machines(real).apply(fault);
      m.networkFaults += 1;
      await sleep(hold);
    },
  );
}

/**
 * The nemesis of the machines world: a machine isolated; the machines split in two sides; one link cut
 * both ways, or one direction of it only; a Redis master cut off from the other Redis machines and the
 * workers while the APIs still reach it (the minority a master keeps accepting writes in until its
 * replica is promoted: docs/failure-model.md); a MySQL primary lost — its process killed, or its machine
 * cut off — and its replica promoted in its place, the apps following the primary's floating address
 * (scripts/lib/mysql-machines.mjs; the lost machine is rebuilt as the replica when the run settles); and
 * the heal of whatever network fault is in force.
 */
export function networkFaultCommands(kinds: ReadonlySet<FaultKind>): fc.Arbitrary<ChaosCommand>[] {
  const arbitraries: fc.Arbitrary<ChaosCommand>[] = [];
  if (kinds.has('machine-isolate')) {
    arbitraries.push(
      fc
        .tuple(fc.constantFrom(...MACHINES), holdMs)
        .map(([machine, hold]) =>
          networkFault('machine-isolate', { label: `isolate(${machine})`, cuts: [], isolated: [machine] }, hold),
        ),
    );
  }
  if (kinds.has('network-split')) {
    const sides = fc
      .array(fc.boolean(), { minLength: MACHINES.length, maxLength: MACHINES.length })
      .filter((picks) => picks.some(Boolean) && !picks.every(Boolean));
    arbitraries.push(
      fc.tuple(sides, holdMs).map(([picks, hold]) => {
        const sideA = MACHINES.filter((_, i) => picks[i]);
        const sideB = MACHINES.filter((_, i) => !picks[i]);
        const label = `split([${sideA.join(', ')}] | [${sideB.join(', ')}])`;
        return networkFault('network-split', { label, cuts: between(sideA, sideB), isolated: [] }, hold);
      }),
    );
  }
  if (kinds.has('link-cut')) {
    arbitraries.push(
      fc
        .tuple(fc.constantFrom(...LINKS), holdMs)
        .map(([[a, b], hold]) =>
          networkFault('link-cut', { label: `cut(${a} <-> ${b})`, cuts: bothWays(a, b), isolated: [] }, hold),
        ),
    );
  }
  if (kinds.has('link-cut-one-way')) {
    arbitraries.push(
      fc.tuple(fc.constantFrom(...LINKS), fc.boolean(), holdMs).map(([[a, b], reverse, hold]) => {
        const [from, to] = reverse ? [b, a] : [a, b];
        return networkFault(
          'link-cut-one-way',
          { label: `cut(${from} -> ${to})`, cuts: [[from, to]], isolated: [] },
          hold,
        );
      }),
    );
  }
  if (kinds.has('master-cut-off')) {
    arbitraries.push(
      // Long enough, at its longest, for the majority to promote the cut-off master's replica.
      fc.tuple(fc.constantFrom(SALE_MASTER, ...REDIS), fc.integer({ min: 2_000, max: 12_000 })).map(([target, hold]) =>
        networkFault(
          'master-cut-off',
          target === SALE_MASTER
            ? {
                label: `masterCutOff(${SALE_MASTER} | Redis majority and workers)`,
                resolve: async (real) => {
                  const { machine, serving } = await saleMaster(real);
                  return masterCutOff(machine, serving);
                },
              }
            : masterCutOff(target),
          hold,
        ),
      ),
    );
  }
  if (kinds.has('mysql-failover')) {
    arbitraries.push(
      fc
        .tuple(
          fc.constantFrom('kill' as const, 'isolate' as const),
          // Half the time the replica stops receiving a while before its primary is lost.
          fc.oneof(fc.constant(0), fc.integer({ min: 500, max: 4_000 })),
          holdMs,
        )
        .map(([fence, lagFirstMs, hold]) =>
          command(
            `mysqlFailover(primary ${fence === 'kill' ? 'killed' : 'cut off'}${lagFirstMs > 0 ? `, its replica cut off from it ${lagFirstMs}ms before` : ''}), hold ${hold}ms`,
            (m) => !m.mysqlFailedOver,
            async (m, real) => {
              // Refused where the replica may lack commits a client was told of (it was not being waited for).
              if (lagFirstMs > 0) real.world.holdMysqlCommits();
              const failedOver = await machines(real).failOverMysql(fence, lagFirstMs);
              count(real, failedOver ? 'mysql-failover' : 'mysql-failover-refused');
              m.mysqlFailedOver = true;
              // The replica's cut stays in force: a heal undoes it with the others.
              if (lagFirstMs > 0) m.networkFaults += 1;
              await sleep(hold);
            },
          ),
        ),
    );
  }
  if (NETWORK_FAULT_KINDS.some((kind) => kinds.has(kind))) {
    arbitraries.push(
      fc.integer({ min: 0, max: 3_000 }).map((afterMs) =>
        command(
          `heal(after ${afterMs}ms)`,
          (m) => m.networkFaults > 0,
          async (m, real) => {
            await sleep(afterMs);
            await machines(real).healAll();
            real.world.releaseMysqlCommits();
            m.networkFaults = 0;
          },
        ),
      ),
    );
  }
  return arbitraries;
}
