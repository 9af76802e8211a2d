import type { FinalState, Violation } from './checker';
import { describe, instant, isPurchase, type Operation, shortToken } from './history';
import { roomRules } from './room-rules';
import type { EndsAtSample } from './sale-window';
import type { RunWorld } from './world';

/**
 * A unit an order gave back (cancelled, expired, FAILED: MySQL's `updated_at`) counts as sellable again
 * only this long after: the return is one MySQL transaction, then a lease and its message to the
 * instances' sold-out flags, which take a moment (docs/failure-model.md "The answer rules").
 */
const RETURN_GRACE_MS = 1_000;
/**
 * How long after its statement a change may commit while `mysql-slow` delays every chunk by up to 750 ms
 * each way: the expiry's and the cancel's transactions make a handful of round trips after it.
 */
const SLOW_COMMIT_GRACE_MS = 10_000;

/** How far around a request a reading of MySQL's end still counts for a `SALE_ENDED` given to it. */
const ENDED_AROUND_MS = 1_000;

const GIVEN_BACK = new Set(['CANCELLED', 'EXPIRED', 'FAILED']);

/**
 * The answer rules of docs/failure-model.md, judged on each answer with the instants it was sent and
 * given, against MySQL's rows after quiet and MySQL's end of the sale as read over the run.
 */
export function judgeAnswers(world: RunWorld, state: FinalState): Violation[] {
  const byToken = new Map<string, Operation[]>();
  for (const operation of world.history.operations) {
    if (!isPurchase(operation)) continue;
    const answers = byToken.get(operation.subject) ?? [];
    answers.push(operation);
    byToken.set(operation.subject, answers);
  }
  return [
    ...soldOutIsTrue(world, state, byToken),
    ...noSaleAfterTheEnd(world.window?.samples ?? [], byToken),
    ...sameAnswerEverywhere(world, state, byToken),
    ...orderAsItIs(world, state, byToken),
    ...roomRules(world, state, byToken),
  ];
}

/**
 * (a) A `410 SOLD_OUT` is true: at some instant between its request and its answer, fewer than the
 * quantity asked were sellable. Checked from above: every unit some purchase may have taken by the
 * answer — each order MySQL holds (any status) whose token was first sent before the answer, and each
 * token that got a 2xx or an unknown answer and has no order — minus the units orders gave back
 * RETURN_GRACE_MS before the request was sent. Units in doubt or moving between buckets count as
 * sellable: a buyer who meets them is told to try again (`503`), never `SOLD_OUT`.
 */
function soldOutIsTrue(world: RunWorld, state: FinalState, byToken: Map<string, Operation[]>): Violation[] {
  const claims = unitClaims(state, byToken);
  const violations: Violation[] = [];
  for (const answers of byToken.values()) {
    for (const operation of answers) {
      if (operation.status !== 410 || operation.code !== 'SOLD_OUT') continue;
      const taken = unitsTaken(claims, operation, RETURN_GRACE_MS);
      const sellable = world.sale.stock - taken;
      if (sellable >= operation.quantity!) {
        violations.push({
          invariant: 'a SOLD_OUT is true',
          detail: `${describe(operation)}: at most ${taken} of ${world.sale.stock} units were taken or promised throughout the request`,
        });
      }
    }
  }
  return violations;
}

/** Units some purchase may have taken: a token's first send, its units, when its order gave them back. */
export interface UnitClaim {
  firstSent: number;
  units: number;
  givenBackAt?: number;
}

/**
 * Every unit some purchase may have taken, from above: each order MySQL holds (any status), and each
 * token that got a 2xx or an unknown answer and has no order (rule 1's count).
 */
export function unitClaims(state: FinalState, byToken: Map<string, Operation[]>): UnitClaim[] {
  const claims: UnitClaim[] = [];
  const rowTokens = new Set<string>();
  for (const row of state.orders) {
    if (row.submit_token) rowTokens.add(row.submit_token);
    const answers = row.submit_token ? byToken.get(row.submit_token) : undefined;
    claims.push({
      firstSent: answers ? Math.min(...answers.map((operation) => operation.sentAt)) : -Infinity,
      units: row.quantity,
      givenBackAt: GIVEN_BACK.has(row.status) ? row.updatedAt : undefined,
    });
  }
  for (const [token, answers] of byToken) {
    if (rowTokens.has(token) || answers.every((operation) => operation.outcome === 'fail')) continue;
    claims.push({ firstSent: Math.min(...answers.map((operation) => operation.sentAt)), units: answers[0]!.quantity! });
  }
  return claims;
}

/**
 * The most units taken by `operation`'s answer: claims first sent before it, less those given back
 * `graceMs` before it was sent.
 */
export function unitsTaken(claims: readonly UnitClaim[], operation: Operation, graceMs: number): number {
  return claims
    .filter((claim) => claim.firstSent < operation.answeredAt)
    .filter((claim) => claim.givenBackAt === undefined || claim.givenBackAt + graceMs > operation.sentAt)
    .reduce((sum, claim) => sum + claim.units, 0);
}

/**
 * (b) No `202`/`201` to a purchase sent after the sale's end as MySQL recorded it then. MySQL's end is
 * known at an instant when a reading before it and a reading after it show the same value (an end is
 * only ever written anew: a later instant, or a reopen's later end). A promised token reserved at one of
 * the attempts that may have reserved: the promised one, and the unknown ones before it (a refusal did
 * nothing). It breaks the rule only if every one of them was sent while the sale had certainly ended: a
 * replay of a token bought before the end is answered its order, rightly, and a token whose attempt
 * during the end had an unknown outcome (its reply lost) may have reserved at a later attempt, once a
 * reopen moved the end.
 */
function noSaleAfterTheEnd(samples: readonly EndsAtSample[], byToken: Map<string, Operation[]>): Violation[] {
  const violations: Violation[] = [];
  for (const answers of byToken.values()) {
    const promised = answers.find((operation) => operation.outcome === 'ok');
    if (!promised) continue;
    const mayHaveReserved = answers.filter((o) => o.index <= promised.index && o.outcome !== 'fail');
    const endedAt = mayHaveReserved.map((o) => certainEndBefore(samples, o.sentAt));
    if (endedAt.every((ended) => ended !== undefined)) {
      const first = mayHaveReserved[0]!;
      const { before, after } = endedAt[0]!;
      violations.push({
        invariant: 'no sale after its end',
        detail: `${describe(promised)}: token#${shortToken(promised.subject)} was sent ${instant(first.sentAt)}, after the end MySQL held from ${instant(before.answeredAt)} to ${instant(after.startedAt)}: ${instant(before.endsAt)}${mayHaveReserved.length > 1 ? ` (and each of its ${mayHaveReserved.length} attempts that may have reserved was sent while the sale had ended)` : ''}`,
      });
    }
  }
  return violations;
}

/** The readings that prove MySQL's end was `sent` or earlier at that instant; undefined if none do. */
function certainEndBefore(
  samples: readonly EndsAtSample[],
  sent: number,
): { before: EndsAtSample; after: EndsAtSample } | undefined {
  const before = samples.filter((sample) => sample.answeredAt <= sent).at(-1);
  const after = samples.find((sample) => sample.startedAt >= sent);
  return before && after && before.endsAt === after.endsAt && before.endsAt <= sent ? { before, after } : undefined;
}

/**
 * (c) A token, once promised, gets that answer from every API process: no refusal after its first
 * `2xx`, wherever the replay lands (a sold-out flag that does not know the buyer would say `410`) — but
 * `410 SALE_ENDED` once the sale has ended, which docs/api.md puts before the replay. Different order
 * numbers for one token are "one token, one order" (checker.ts).
 */
function sameAnswerEverywhere(world: RunWorld, state: FinalState, byToken: Map<string, Operation[]>): Violation[] {
  const samples = world.window?.samples ?? [];
  const reopens = world.history.operations.filter((operation) => operation.kind === 'reopen');
  const written = new Set(state.orders.map((row) => row.submit_token));
  const violations: Violation[] = [];
  for (const [token, answers] of byToken) {
    const first = answers.find((operation) => operation.outcome === 'ok');
    // Sent after the promise was given: a replay racing the first purchase may rightly have been refused.
    const refused =
      first &&
      answers.find(
        (o) =>
          o.sentAt >= first.answeredAt &&
          o.outcome === 'fail' &&
          !endedAround(samples, o) &&
          !endHeldThrough(samples, reopens, o) &&
          !lostBefore(world, written, token, answers, o),
      );
    if (first && refused) {
      violations.push({
        invariant: 'a promised token gets the same answer from every process',
        detail: `${describe(first)}, then ${describe(refused)}`,
      });
    }
  }
  return violations;
}

/**
 * The refusal came after Redis lost acknowledged data (a fault emulating a weaker persistence setting)
 * that followed the token's last promise, and MySQL never held the token's order: the promise was lost
 * as that setting allows (checker.ts counts it), and the refusal is how its buyer learns it.
 */
function lostBefore(
  world: RunWorld,
  written: ReadonlySet<string | null>,
  token: string,
  answers: readonly Operation[],
  refusal: Operation,
): boolean {
  if (written.has(token)) return false;
  const lastPromise = answers.filter((o) => o.outcome === 'ok' && o.sentAt < refusal.sentAt).at(-1);
  const loss = lastPromise && world.dataLossAfter(lastPromise.sentAt);
  return loss !== undefined && loss.at < refusal.sentAt;
}

/**
 * `410 SALE_ENDED`, and a reading of MySQL taken around the request shows an end before the answer:
 * from ENDED_AROUND_MS before the request to ENDED_AROUND_MS after the answer (an end committed just
 * before the answer is read just after it), or to the first reading begun after the answer when that came
 * later — a slow MySQL, or a busy machine that held the sampler back, spaces the readings out, and the
 * end the answer saw can only show in the next one. An answering process whose clock runs ahead saw the
 * end that much sooner: the strategies that judge the window by the deciding process's clock move its
 * edge by the skew (docs/failure-model.md, "a process's clock a few seconds off").
 */
function endedAround(samples: readonly EndsAtSample[], operation: Operation): boolean {
  if (operation.code !== 'SALE_ENDED') return false;
  const nextReading = samples.find((sample) => sample.startedAt >= operation.answeredAt);
  const until = Math.max(operation.answeredAt + ENDED_AROUND_MS, nextReading?.startedAt ?? 0);
  const aheadMs = Math.max(0, operation.skewMs ?? 0);
  return samples.some(
    (sample) =>
      sample.startedAt <= until &&
      sample.answeredAt >= operation.sentAt - ENDED_AROUND_MS &&
      sample.endsAt <= operation.answeredAt + aheadMs,
  );
}

/**
 * `410 SALE_ENDED` while MySQL could not be read around the answer (a MySQL failover leaves a gap in the
 * readings), but the last reading answered before it found the sale already ended, and no reopen that
 * could have taken effect since was sent before the answer (one answered before that reading began is in
 * it; a refused one changed nothing): the end that reading saw still held when the answer was given.
 */
function endHeldThrough(
  samples: readonly EndsAtSample[],
  reopens: readonly Operation[],
  operation: Operation,
): boolean {
  if (operation.code !== 'SALE_ENDED') return false;
  const last = samples.filter((sample) => sample.answeredAt <= operation.answeredAt).at(-1);
  if (!last || last.endsAt > last.startedAt) return false;
  return !reopens.some(
    (reopen) =>
      reopen.outcome !== 'fail' &&
      reopen.sentAt <= operation.answeredAt &&
      !(reopen.outcome === 'ok' && reopen.answeredAt < last.startedAt),
  );
}

/**
 * (c, continued) A promised token replayed after its order left `PENDING_PAYMENT` for good — cancelled or
 * expired: MySQL's last change of the row, RETURN_GRACE_MS before the request, or a cancel answered `200`
 * before it — is answered with that order as it is: a `2xx` carrying `QUEUED` or `PENDING_PAYMENT` then
 * promises a unit the buyer no longer holds.
 */
function orderAsItIs(world: RunWorld, state: FinalState, byToken: Map<string, Operation[]>): Violation[] {
  const rows = new Map(state.orders.map((row) => [row.order_no, row]));
  const cancelledAt = new Map<string, number>();
  for (const operation of world.history.operations) {
    if (operation.kind === 'cancel' && operation.outcome === 'ok' && !cancelledAt.has(operation.subject)) {
      cancelledAt.set(operation.subject, operation.answeredAt);
    }
  }
  const violations: Violation[] = [];
  for (const answers of byToken.values()) {
    for (const operation of answers) {
      if (operation.outcome !== 'ok' || !operation.orderNo) continue;
      const row = rows.get(operation.orderNo);
      if (!row || (row.status !== 'CANCELLED' && row.status !== 'EXPIRED')) continue;
      // The row's last change is stamped when its statement ran; the change is seen once its transaction
      // commits, seconds later when every round trip to MySQL is slowed. A replay that overlapped a paused
      // MySQL races the commit at the resume: not judged.
      if (operation.faultsActive.includes('mysql paused')) continue;
      const grace = operation.faultsActive.includes('mysql slow') ? SLOW_COMMIT_GRACE_MS : RETURN_GRACE_MS;
      // A change whose commit the primary held for its replica was seen only once the replica had it.
      const changedAt = world.mysqlChangeVisibleFrom(row.updatedAt);
      const leftAt = Math.min(changedAt + grace, cancelledAt.get(operation.orderNo) ?? Infinity);
      if (operation.sentAt < leftAt) continue;
      if (operation.orderStatus === 'QUEUED' || operation.orderStatus === 'PENDING_PAYMENT') {
        violations.push({
          invariant: 'a replay answers the order as it is',
          detail: `${describe(operation)}: order ${operation.orderNo} was ${row.status} from ${instant(row.updatedAt)}`,
        });
      }
    }
  }
  return violations;
}
