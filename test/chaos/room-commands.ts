import fc from 'fast-check';
import { API_INSTANCES } from './cluster';
import { type ChaosCommand, command, count } from './commands';
import type { RoomSettings } from './history';
import { admit, joinRoom, pollRoom, usePassLate } from './room-clients';

const always = () => true;
const api = fc.integer({ min: 0, max: API_INSTANCES - 1 });
const pick = fc.nat({ max: 1_000 });

/** How long `waitAdmitted` polls as advised before it gives up. */
const ADMIT_WITHIN_MS = 6_000;
/** The longest a `latePass` waits for the pass to expire (the passes drawn last 10–14 s). */
const LATE_PASS_MAX_WAIT_MS = 16_000;

type Weighted = { arbitrary: fc.Arbitrary<ChaosCommand>; weight: number };

/**
 * A room sale's client actions (test/chaos/room-clients.ts), drawn only when `--rooms` has `room`: join,
 * poll now (due or not: `429` then), wait in the room polling as the ticket advises, and a pass used late.
 * Minting with the pass and buying are the usual `mintToken` and `buy`, which go through the room in a
 * room sale. On a sale without a room they meet `409 NO_WAITING_ROOM`, which is judged too.
 */
export function roomClientCommands(): Weighted[] {
  const buyerAndApi = fc.tuple(pick, api);
  return [
    {
      weight: 2,
      arbitrary: buyerAndApi.map(([b, a]) =>
        command(`join(buyer#${b}, api${a})`, always, async (_m, real) => {
          const buyer = real.world.scheduleBuyer(b);
          if (buyer) await joinRoom(real.world, buyer, a);
        }),
      ),
    },
    {
      weight: 1,
      arbitrary: buyerAndApi.map(([b, a]) =>
        command(`poll(buyer#${b}, api${a})`, always, async (_m, real) => {
          const buyer = real.world.scheduleBuyer(b);
          if (buyer) await pollRoom(real.world, buyer, a);
        }),
      ),
    },
    {
      weight: 2,
      arbitrary: buyerAndApi.map(([b, a]) =>
        command(`waitAdmitted(buyer#${b}, api${a})`, always, async (_m, real) => {
          const buyer = real.world.scheduleBuyer(b);
          if (buyer) await admit(real.world, buyer, a, ADMIT_WITHIN_MS);
        }),
      ),
    },
    {
      weight: 1,
      arbitrary: buyerAndApi.map(([b, a]) =>
        command(`latePass(buyer#${b}, api${a})`, always, async (_m, real) => {
          const buyer = real.world.scheduleBuyer(b);
          if (buyer) await usePassLate(real.world, buyer, a, ADMIT_WITHIN_MS, LATE_PASS_MAX_WAIT_MS);
        }),
      ),
    },
  ];
}

/**
 * The admin changes the sale's waiting room mid-run (`PATCH waitingRoom`): another rate and cap,
 * the room removed, or a room added (again). Drawn with the admin actions when `--rooms` has `room`.
 */
export function roomAdminCommand(): fc.Arbitrary<ChaosCommand> {
  const settings = fc
    .tuple(
      fc.integer({ min: 1, max: 6 }),
      fc.option(fc.integer({ min: 1, max: 4 }), { nil: undefined }),
      fc.integer({ min: 10, max: 14 }),
    )
    .map(([admitPerSecond, maxShopping, passSeconds]): RoomSettings => ({
      admitPerSecond,
      ...(maxShopping === undefined ? {} : { maxShopping }),
      passSeconds,
    }));
  const change = fc.oneof(
    { arbitrary: settings, weight: 3 },
    { arbitrary: fc.constant<RoomSettings | null>(null), weight: 1 },
  );
  return fc.tuple(change, api).map(([room, a]) =>
    command(
      room
        ? `adminRoom(${room.admitPerSecond}/s, cap ${room.maxShopping ?? '-'}, pass ${room.passSeconds}s, api${a})`
        : `adminRoomRemove(api${a})`,
      always,
      async (_m, real) => {
        count(real, room ? 'admin-room' : 'admin-room-remove');
        await changeRoom(real.world, room, a);
      },
    ),
  );
}

/** `PATCH waitingRoom` as the console sends it, recorded like the other admin actions. */
async function changeRoom(world: import('./world').RunWorld, room: RoomSettings | null, a: number): Promise<void> {
  if (!world.adminJwt) throw new Error('admin actions need the admin token on the run world');
  const answer = await world.call(a, 'PATCH', `/api/admin/sales/${world.sale.id}`, world.adminJwt, {
    waitingRoom: room,
  });
  world.record(
    'room',
    a,
    -1,
    room ? `waitingRoom=${JSON.stringify(room)}` : 'waitingRoom=null',
    undefined,
    answer,
    false,
    {
      room,
    },
  );
  if (answer.status !== undefined && answer.status < 300) world.roomNow = room;
}
