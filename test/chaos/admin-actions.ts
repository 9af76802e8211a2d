import type { AdminActionKind } from './history';
import type { RunWorld } from './world';

/** How far a reopen moves the end: well past the run, so the sale sells again until the next end. */
const REOPEN_FOR_MS = 3_600_000;

/**
 * An admin's action on the run's sale, as the console sends it (docs/api.md "Sales"): end it now
 * (`PATCH endsAt=now`), reopen it (move the end later), edit its name and description, or preload it.
 * The answer goes into the history like a buyer's (a `503` is `info`: the change may or may not have
 * been applied), and MySQL's end is read right after it, so the answer rules know the window
 * (test/chaos/answer-rules.ts).
 */
export async function adminAction(world: RunWorld, kind: AdminActionKind, api: number, serial: number): Promise<void> {
  if (!world.adminJwt) throw new Error('admin actions need the admin token on the run world');
  const path = `/api/admin/sales/${world.sale.id}`;
  const now = Date.now();
  const [method, route, body, subject] =
    kind === 'end'
      ? (['PATCH', path, { endsAt: new Date(now).toISOString() }, 'endsAt=now'] as const)
      : kind === 'reopen'
        ? (['PATCH', path, { endsAt: new Date(now + REOPEN_FOR_MS).toISOString() }, 'endsAt=now+1h'] as const)
        : kind === 'edit'
          ? ([
              'PATCH',
              path,
              { name: `chaos sale, edit ${serial}`, description: `edited by the explorer (${serial})` },
              'name, description',
            ] as const)
          : (['POST', `${path}/preload`, undefined, 'preload'] as const);
  const answer = await world.call(api, method, route, world.adminJwt, body);
  world.record(kind, api, -1, subject, undefined, answer);
  // Not awaited: with MySQL paused the reading waits for it, and the schedule must go on to resume it.
  void world.window?.sample();
}
