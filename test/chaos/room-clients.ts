import type { TicketSeen } from './history';
import type { Answer, Buyer, RunWorld } from './world';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A buyer's ticket as the storefront keeps it: the last answer, its advice, and the pass once admitted. */
export interface HeldTicket {
  state: string;
  pollAfterMs: number;
  /** When the last join or poll was answered: the next poll is due `pollAfterMs` later. */
  answeredAt: number;
  pass?: { pass: string; expiresAt: number };
}

/** The share of crowd buyers who, just admitted, hold their pass for a while before asking for a token. */
const BROWSE_SHARE = 0.35;

/** A pass counts as held while it has this long left: the token request must reach an API before it expires. */
const PASS_MARGIN_MS = 500;

/** The buyer holds a pass that has not expired (nor is about to). */
export function validPass(buyer: Buyer, now = Date.now()): boolean {
  return !!buyer.ticket?.pass && buyer.ticket.pass.expiresAt > now + PASS_MARGIN_MS;
}

/** When the buyer's next poll is due, as the last answer advised (now if they have no ticket). */
export function pollDueAt(buyer: Buyer): number {
  return buyer.ticket ? buyer.ticket.answeredAt + buyer.ticket.pollAfterMs : 0;
}

function ticketOf(answer: Answer): TicketSeen | undefined {
  const body = answer.body;
  if (answer.status === undefined || answer.status >= 300 || !body?.state) return undefined;
  return {
    state: body.state,
    ...(body.position !== undefined ? { position: body.position } : {}),
    ...(body.pollAfterMs !== undefined ? { pollAfterMs: body.pollAfterMs } : {}),
    ...(body.passExpiresAt ? { passExpiresAt: Date.parse(body.passExpiresAt) } : {}),
  };
}

/** Keeps what a join or poll answered on the buyer, as the storefront does; a `404`: the ticket is gone. */
function keep(buyer: Buyer, answer: Answer, ticket: TicketSeen | undefined): void {
  if (answer.status === 404) {
    buyer.ticket = undefined;
    return;
  }
  if (!ticket) {
    // 429 too soon, 503: the advice stands, counted from now.
    if (buyer.ticket) buyer.ticket = { ...buyer.ticket, answeredAt: answer.answeredAt };
    return;
  }
  const pass =
    ticket.state === 'admitted' && answer.body?.pass && ticket.passExpiresAt
      ? { pass: answer.body.pass, expiresAt: ticket.passExpiresAt }
      : // A buyer keeps the pass they hold until it expires, whatever a later poll says.
        buyer.ticket?.pass;
  buyer.ticket = {
    state: ticket.state,
    pollAfterMs: ticket.pollAfterMs ?? 1_000,
    answeredAt: answer.answeredAt,
    ...(pass ? { pass } : {}),
  };
}

/** A join or a poll of the buyer's room, recorded and kept on the buyer as the storefront keeps it. */
async function callRoom(world: RunWorld, buyer: Buyer, api: number, kind: 'join' | 'poll'): Promise<Answer> {
  const method = kind === 'join' ? 'POST' : 'GET';
  const answer = await world.call(api, method, `/api/sales/${world.sale.id}/queue`, buyer.jwt);
  const ticket = ticketOf(answer);
  world.record(kind, api, buyer.index, 'queue', undefined, answer, buyer.crowd, ticket ? { ticket } : {});
  keep(buyer, answer, ticket);
  return answer;
}

/** `POST /api/sales/:id/queue`, recorded. */
export function joinRoom(world: RunWorld, buyer: Buyer, api: number): Promise<Answer> {
  return callRoom(world, buyer, api, 'join');
}

/** `GET /api/sales/:id/queue` now, due or not (a poll sooner than half the advice is refused `429`), recorded. */
export function pollRoom(world: RunWorld, buyer: Buyer, api: number): Promise<Answer> {
  return callRoom(world, buyer, api, 'poll');
}

/**
 * The storefront's wait in the room: join if the buyer has no ticket, then poll when each answer says
 * to, until a pass, a final state (`sold_out`, `ended`, no room) or `withinMs`. True with a pass.
 */
export async function admit(world: RunWorld, buyer: Buyer, api: number, withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    if (validPass(buyer)) return true;
    const answer = buyer.ticket ? undefined : await joinRoom(world, buyer, api);
    if (answer?.body?.error?.code === 'NO_WAITING_ROOM') return false;
    if (validPass(buyer)) return true;
    if (buyer.ticket?.state === 'ended') return false;
    const due = Math.max(pollDueAt(buyer), Date.now() + (answer && !buyer.ticket ? 500 : 0));
    if (due > deadline) return false;
    await sleep(Math.max(0, due - Date.now()));
    if (!buyer.ticket) continue;
    const polled = await pollRoom(world, buyer, api);
    if (polled.body?.error?.code === 'NO_WAITING_ROOM') return false;
    if (polled.status === undefined || polled.status >= 500) await sleep(500);
  }
}

/**
 * One step of a crowd buyer in a room sale, as many requests as one attempt makes: a token with their
 * pass if they hold one; otherwise their join, or their poll (waiting for it to be due, at most
 * `maxWaitMs`; undue polls now and then, which must be refused `429`).
 */
export async function roomStep(
  world: RunWorld,
  buyer: Buyer,
  api: number,
  next: () => number,
  maxWaitMs = 1_000,
): Promise<string | undefined> {
  if (validPass(buyer)) return world.mintFor(buyer, api);
  // One step at a time per buyer, as one browser tab does: another attempt of the crowd waits its turn.
  if (buyer.inRoom) {
    await sleep(200);
    return undefined;
  }
  buyer.inRoom = true;
  try {
    return await step(world, buyer, api, next, maxWaitMs);
  } finally {
    buyer.inRoom = false;
  }
}

async function step(
  world: RunWorld,
  buyer: Buyer,
  api: number,
  next: () => number,
  maxWaitMs: number,
): Promise<string | undefined> {
  // Now and then the token route without a pass: it must refuse (403) while the sale has a room.
  if (next() < 0.08) return world.mintFor(buyer, api, null);
  if (!buyer.ticket) {
    await joinRoom(world, buyer, api);
  } else {
    const wait = pollDueAt(buyer) - Date.now();
    if (wait > 0 && next() >= 0.1) await sleep(Math.min(wait, maxWaitMs));
    await pollRoom(world, buyer, api);
  }
  // Some admitted buyers browse before they buy: their pass stays unspent until a later attempt picks them.
  if (!validPass(buyer) || next() < BROWSE_SHARE) return undefined;
  return world.mintFor(buyer, api);
}

/**
 * A pass used late: the buyer's pass (waiting in the room for one first, at most `admitWithinMs`) is
 * held until it has expired, then sent for a token — which must be refused `403 ADMISSION_REQUIRED`.
 * A pass that would take more than `maxWaitMs` to expire is not waited for.
 */
export async function usePassLate(
  world: RunWorld,
  buyer: Buyer,
  api: number,
  admitWithinMs: number,
  maxWaitMs: number,
): Promise<void> {
  if (!validPass(buyer)) await admit(world, buyer, api, admitWithinMs);
  const held = buyer.ticket?.pass;
  if (!held) return;
  // Past its expiry by more than the answering instance's clock is off (clock-skew) and a second.
  const skew = Math.abs(world.cluster.clockOffsetMs(api));
  const wait = held.expiresAt + skew + 1_000 - Date.now();
  if (wait > maxWaitMs) return;
  await sleep(Math.max(0, wait));
  const token = await world.mintFor(buyer, api, held);
  if (token) buyer.unsent.push(token);
}
