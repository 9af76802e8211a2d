import { unitClaims, unitsTaken } from './answer-rules';
import type { FinalState, Violation } from './checker';
import { describe, instant, isPurchase, isRoomCall, type Operation, type RoomSettings } from './history';
import type { RunWorld } from './world';

/** A change of the room reaches every API instance's copy of the sale within this long (docs/architecture.md). */
const ROOM_SPREAD_MS = 2_000;
/**
 * How old the room's reading of the units left may be when it decides (0.5 s by design, and the read of
 * MySQL itself, slower under `mysql-slow`): a unit counts as given back, or as sold, only this long after.
 */
const ROOM_READING_GRACE_MS = 3_000;
/** A pass counts as expired this long after its `passExpiresAt` (Redis' clock and ours are the machine's). */
const PASS_CLOCK_MARGIN_MS = 300;
/** A token request with an expired pass is judged only this long past the expiry (and the instance's skew). */
const LATE_PASS_MARGIN_MS = 1_000;
/** An unknown purchase may still end its buyer's turn this long after it was sent. */
const UNKNOWN_PURCHASE_REACH_MS = 10_000;

/** One admission: a buyer's pass, first seen in the answer `op` (the admission happened during it, or before: admittedDuring). */
interface Admission {
  buyer: number;
  op: Operation;
  expiresAt: number;
  /** When the buyer certainly counted as shopping: from the answer to the earliest instant the turn may have ended. */
  from: number;
  until: number;
}

/**
 * The waiting room's rules (docs/failure-model.md "The answer rules", 5–9), judged on every join, poll
 * and token request of the history with the instants they were sent and answered.
 */
export function roomRules(world: RunWorld, state: FinalState, byToken: Map<string, Operation[]>): Violation[] {
  const operations = world.history.operations;
  if (!world.sale.room && !operations.some((o) => o.kind === 'room' && o.outcome !== 'fail')) return [];
  const changes = operations.filter((o) => o.kind === 'room' && o.outcome !== 'fail');
  const rooms = (from: number, to: number) => roomsPossible(world.sale.room, changes, from, to);
  const admissions = admissionsOf(operations);
  const passLengths = [
    ...new Set(
      [world.sale.room, ...changes.map((change) => change.room)].flatMap((room) =>
        room ? [room.passSeconds * 1_000] : [],
      ),
    ),
  ];
  return [
    ...capAndStock(world, state, admissions, rooms, passLengths),
    ...firstComeFirstServed(world, operations, admissions, changes, rooms),
    ...soldOutTicketsTrue(world, state, byToken),
    ...tokensOnlyWithAPass(operations, rooms),
  ];
}

/**
 * The rooms that may have been in force at some instant of [from, to]: the last change answered `2xx`
 * and spread before `from` (or the sale's creation), and every change sent after it and before `to`
 * (an unknown answer may have been applied).
 */
export function roomsPossible(
  created: RoomSettings | null,
  changes: readonly Operation[],
  from: number,
  to: number,
): (RoomSettings | null)[] {
  const base = changes.filter((c) => c.outcome === 'ok' && c.answeredAt + ROOM_SPREAD_MS <= from).at(-1);
  const after = changes.filter((c) => c.sentAt > (base?.sentAt ?? -Infinity) && c.sentAt <= to);
  return [base ? base.room! : created, ...after.map((c) => c.room ?? null)];
}

/** Every admission the history shows, and how long its buyer certainly counted as shopping. */
function admissionsOf(operations: readonly Operation[]): Admission[] {
  const seen = new Map<string, Admission>();
  for (const op of operations) {
    const expiresAt = op.ticket?.passExpiresAt;
    if (!isRoomCall(op) || op.ticket?.state !== 'admitted' || !expiresAt) continue;
    const key = `${op.buyer}:${expiresAt}`;
    if (seen.has(key)) continue;
    // The turn ends at the pass' expiry, or once a purchase by the buyer that may have ended it was sent.
    const endingPurchase = operations
      .filter((p) => isPurchase(p) && p.buyer === op.buyer)
      .filter(
        (p) => p.answeredAt > op.sentAt || (p.outcome === 'info' && p.sentAt > op.sentAt - UNKNOWN_PURCHASE_REACH_MS),
      )
      .map((p) => Math.max(p.sentAt, op.sentAt));
    const until = Math.min(expiresAt - PASS_CLOCK_MARGIN_MS, ...endingPurchase);
    seen.set(key, { buyer: op.buyer, op, expiresAt, from: op.answeredAt, until });
  }
  return [...seen.values()];
}

/**
 * (5) The cap: nobody is admitted while `maxShopping` other buyers certainly hold an unexpired, unspent
 * pass (admitted before the admission, no purchase sent since). (6) The stock: nobody is admitted when the
 * buyers certainly shopping, the newcomer included, outnumber the units that can remain — stock less
 * the units of orders promised ROOM_READING_GRACE_MS before the admission and still held after it. Each
 * judged at every span the admission may have happened in (admittedDuring): a violation at all of them.
 */
function capAndStock(
  world: RunWorld,
  state: FinalState,
  admissions: readonly Admission[],
  rooms: (from: number, to: number) => (RoomSettings | null)[],
  passLengths: readonly number[],
): Violation[] {
  const violations: Violation[] = [];
  const promisedAt = firstPromises(world);
  for (const admission of admissions) {
    const spans = admittedDuring(admission, rooms, passLengths);
    const capBroken = spans.map((span) => {
      const others = othersShopping(admissions, admission, span);
      const caps = rooms(span.from, span.to).map((room) => room?.maxShopping);
      if (!caps.every((cap): cap is number => cap !== undefined)) return undefined;
      const cap = Math.max(...caps);
      return others.length >= cap ? { others, cap } : undefined;
    });
    if (capBroken.every((broken) => broken !== undefined)) {
      const { others, cap } = capBroken[0]!;
      violations.push({
        invariant: 'a room admits no one above its cap',
        detail: `${describe(admission.op)}${admittedBefore(admission, spans)}: ${others.length} other buyers held unspent passes throughout (cap ${cap}): ${others
          .map((other) => `buyer${other.buyer} until ${instant(other.until)}`)
          .join(', ')}`,
      });
    }
    const stockBroken = spans.map((span) => {
      const others = othersShopping(admissions, admission, span);
      const held = state.orders
        .filter((row) => row.status !== 'FAILED')
        .filter((row) => (promisedAt.get(row.order_no) ?? Infinity) <= span.from - ROOM_READING_GRACE_MS)
        .filter((row) => !['CANCELLED', 'EXPIRED'].includes(row.status) || row.updatedAt >= span.to)
        .reduce((sum, row) => sum + row.quantity, 0);
      const remaining = world.sale.stock - held;
      const broken = others.length + 1 > remaining && rooms(span.from, span.to).every((room) => room !== null);
      return broken ? { shopping: others.length + 1, remaining, held } : undefined;
    });
    if (stockBroken.every((broken) => broken !== undefined)) {
      const { shopping, remaining, held } = stockBroken[0]!;
      violations.push({
        invariant: 'a room admits no more shoppers than units remain',
        detail: `${describe(admission.op)}${admittedBefore(admission, spans)}: ${shopping} buyers shopping, at most ${remaining} units left (${held} of ${world.sale.stock} held by orders promised before)`,
      });
    }
  }
  return violations;
}

/** A span of time an admission may have happened in. */
interface Span {
  from: number;
  to: number;
}

/**
 * When the room may have given the admission's pass. A pass lasts the room's pass length from the moment
 * it is given, so that moment is its expiry less the pass length of a room that may have been in force
 * then. It may precede the answer that first shows the pass: the room admits whoever is first in line
 * whenever anyone's join or poll runs it, so a buyer may be admitted during another buyer's call (or an
 * own call whose answer was lost) and learn it at their next poll — perhaps after an admin changed the
 * room. A moment within the answer's own request is that request's span; none fitting, that span too.
 */
function admittedDuring(
  admission: Admission,
  rooms: (from: number, to: number) => (RoomSettings | null)[],
  passLengths: readonly number[],
): Span[] {
  const { op } = admission;
  const own = { from: op.sentAt, to: op.answeredAt };
  const spans: Span[] = [];
  for (const passMs of passLengths) {
    const at = admission.expiresAt - passMs;
    if (at > op.answeredAt + PASS_CLOCK_MARGIN_MS) continue;
    if (at >= op.sentAt - PASS_CLOCK_MARGIN_MS) {
      spans.push(own);
      continue;
    }
    const span = { from: at - PASS_CLOCK_MARGIN_MS, to: at + PASS_CLOCK_MARGIN_MS };
    if (rooms(span.from, span.to).some((room) => room !== null && room.passSeconds * 1_000 === passMs)) {
      spans.push(span);
    }
  }
  return spans.length > 0 ? spans : [own];
}

/** The other buyers certainly shopping throughout `span`: admitted before it, pass unexpired and unspent after. */
function othersShopping(admissions: readonly Admission[], admission: Admission, span: Span): Admission[] {
  return admissions.filter(
    (other) => other.buyer !== admission.buyer && other.from <= span.from && other.until >= span.to,
  );
}

/** For a violation's detail: when the admission happened, if before the answer that showed it. */
function admittedBefore(admission: Admission, spans: readonly Span[]): string {
  const earlier = spans.filter((span) => span.to < admission.op.sentAt);
  return earlier.length === 0 ? '' : ` (admitted ${earlier.map((span) => instant(span.from)).join(' or ')})`;
}

/** When each order was first promised (its first 2xx answered). */
function firstPromises(world: RunWorld): Map<string, number> {
  const first = new Map<string, number>();
  for (const op of world.history.operations) {
    if (op.outcome === 'ok' && op.orderNo && !first.has(op.orderNo)) first.set(op.orderNo, op.answeredAt);
  }
  return first;
}

/**
 * (7) First come, first served after the opening: buyer B is admitted (an answer carrying a new pass)
 * while buyer A, whose join was answered `waiting` with a place before B's join was sent, is still
 * waiting — A's later join or poll, sent after B's admission was answered, says `waiting` with a place,
 * and A was neither admitted nor bought in between, nor could a pass of A's have been issued and expired
 * unseen (the whole span is shorter than the shortest pass). Pre-opening joiners are shuffled: not
 * judged; nor is a span in which the admin removed the room.
 */
function firstComeFirstServed(
  world: RunWorld,
  operations: readonly Operation[],
  admissions: readonly Admission[],
  changes: readonly Operation[],
  rooms: (from: number, to: number) => (RoomSettings | null)[],
): Violation[] {
  const violations: Violation[] = [];
  const waiting = (op: Operation) =>
    isRoomCall(op) && op.ticket?.state === 'waiting' && op.ticket.position !== undefined;
  for (const admission of admissions) {
    const b = admission.buyer;
    const lastTurn = Math.max(
      -Infinity,
      ...admissions.filter((a) => a.buyer === b && a.op.answeredAt < admission.op.sentAt).map((a) => a.op.answeredAt),
    );
    const entryB = operations.find(
      (o) => o.kind === 'join' && o.buyer === b && o.sentAt > lastTurn && o.sentAt <= admission.op.sentAt,
    );
    if (!entryB || entryB.sentAt < world.sale.startsAt) continue;
    const flagged = new Set<number>();
    for (const later of operations) {
      if (!waiting(later) || later.buyer === b || flagged.has(later.buyer)) continue;
      if (later.sentAt < admission.op.answeredAt) continue;
      const a = later.buyer;
      const entryA = operations
        .filter((o) => o.kind === 'join' && o.buyer === a && waiting(o) && o.answeredAt < entryB.sentAt)
        .at(-1);
      if (!entryA) continue;
      const between = (o: Operation) => o.sentAt >= entryA.sentAt && o.sentAt <= later.answeredAt;
      const interrupted = operations.some(
        (o) => o.buyer === a && between(o) && (isPurchase(o) || (isRoomCall(o) && o.ticket?.state === 'admitted')),
      );
      const removed = changes.some((c) => between(c) && c.room === null);
      const possible = rooms(entryA.sentAt, later.answeredAt);
      if (interrupted || removed || possible.some((room) => room === null)) continue;
      const shortestPass = Math.min(...possible.map((room) => room!.passSeconds * 1_000));
      if (later.answeredAt >= entryA.sentAt + shortestPass - PASS_CLOCK_MARGIN_MS) continue;
      flagged.add(a);
      violations.push({
        invariant: 'a room admits first come, first served',
        detail: `${describe(admission.op)} (joined ${describe(entryB)}) ahead of buyer${a}, who joined before (${describe(entryA)}) and was still waiting: ${describe(later)}`,
      });
    }
  }
  return violations;
}

/**
 * (8) A ticket's `sold_out` is true: judged as a `410 SOLD_OUT` for one unit (rule 1), the room's reading
 * of the stock allowed ROOM_READING_GRACE_MS to see a unit come back.
 */
function soldOutTicketsTrue(world: RunWorld, state: FinalState, byToken: Map<string, Operation[]>): Violation[] {
  const claims = unitClaims(state, byToken);
  const violations: Violation[] = [];
  for (const op of world.history.operations) {
    if (!isRoomCall(op) || op.ticket?.state !== 'sold_out') continue;
    const taken = unitsTaken(claims, op, ROOM_READING_GRACE_MS);
    if (world.sale.stock - taken >= 1) {
      violations.push({
        invariant: "a room's sold_out is true",
        detail: `${describe(op)}: at most ${taken} of ${world.sale.stock} units were taken or promised throughout the request`,
      });
    }
  }
  return violations;
}

/**
 * (9) While the sale certainly has a room, a submit token is issued only against an unexpired pass: a
 * `201` to a request without a pass, or with a pass sent LATE_PASS_MARGIN_MS (plus the answering
 * instance's clock skew) after it expired, breaks the rule.
 */
function tokensOnlyWithAPass(
  operations: readonly Operation[],
  rooms: (from: number, to: number) => (RoomSettings | null)[],
): Violation[] {
  const violations: Violation[] = [];
  for (const op of operations) {
    if (op.kind !== 'mint' || op.outcome !== 'ok' || !op.pass) continue;
    if (rooms(op.sentAt, op.answeredAt).some((room) => room === null)) continue;
    const late = op.pass !== 'none' && op.sentAt > op.pass.expiresAt + Math.abs(op.skewMs ?? 0) + LATE_PASS_MARGIN_MS;
    if (op.pass === 'none' || late) {
      violations.push({
        invariant: 'a room sale issues tokens only against a valid pass',
        detail: describe(op),
      });
    }
  }
  return violations;
}
