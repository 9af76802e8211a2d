import fc from 'fast-check';
import { API_INSTANCES } from './cluster';
import { command, type FaultKind, type Weighted } from './commands';
import { redisSnapshot } from './faults/nemesis';
import { roomClientCommands } from './room-commands';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const always = () => true;
const api = fc.integer({ min: 0, max: API_INSTANCES - 1 });
const pick = fc.nat({ max: 1_000 });

/**
 * Client actions: buyers of one sale, as the storefront would act. Weighted towards buying and
 * replaying, the actions the outages interfere with; new buyers are rarer so that one buyer meets
 * several faults.
 */
export function clientCommands(perUserLimit: number, kinds: ReadonlySet<FaultKind>, rooms: boolean): Weighted[] {
  const quantity = fc.integer({ min: 1, max: perUserLimit });
  const extra: Weighted[] = [...(rooms ? roomClientCommands() : [])];
  // Copies of Redis taken as often as a buyer acts, so a token minted before a copy and spent after is common.
  if (kinds.has('redis-snapshots')) {
    extra.push({ weight: 2, arbitrary: redisSnapshot() });
  }
  return [
    ...extra,
    {
      weight: 1,
      arbitrary: api.map((a) => command(`newBuyer(api${a})`, always, (_m, real) => real.world.newBuyer(a))),
    },
    {
      weight: 3,
      arbitrary: fc
        .tuple(pick, api)
        .map(([b, a]) => command(`mintToken(buyer#${b}, api${a})`, always, (_m, real) => real.world.mint(b, a))),
    },
    {
      weight: 5,
      arbitrary: fc.tuple(pick, quantity, api).map(([b, q, a]) =>
        command(`buy(buyer#${b}, x${q}, api${a})`, always, async (_m, real) => {
          await real.world.buy(b, q, a);
        }),
      ),
    },
    {
      weight: 4,
      arbitrary: fc
        .tuple(pick, api)
        .map(([t, a]) => command(`replay(recent#${t}, api${a})`, always, (_m, real) => real.world.replay(t, a))),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(pick, api)
        .map(([o, a]) => command(`pay(order#${o}, api${a})`, always, (_m, real) => real.world.pay(o, a))),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(pick, api)
        .map(([o, a]) => command(`cancel(order#${o}, api${a})`, always, (_m, real) => real.world.cancel(o, a))),
    },
    {
      weight: 2,
      arbitrary: fc.integer({ min: 100, max: 3_000 }).map((ms) => command(`wait(${ms}ms)`, always, () => sleep(ms))),
    },
  ];
}
