import { API_INSTANCES } from './cluster';
import { roomStep } from './room-clients';
import type { Buyer, RunWorld, TokenUse } from './world';

/** Requests the crowd has in flight at once: hundreds of attempts, light enough for a 2-core machine. */
const CROWD_CONCURRENCY = 12;
/** A crowd stops starting attempts after this long (a paused MySQL makes each one wait for its timeout). */
const CROWD_MAX_MS = 8_000;
/** One new crowd buyer per this many attempts, signed in before the attempts start. */
const ATTEMPTS_PER_NEW_BUYER = 8;
/** The trickle's pace: one request per this long, alternating the API instances. */
const TRICKLE_EVERY_MS = 300;

/** A small seeded generator (mulberry32): the same crowd seed makes the same choices. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** Signs in `count` crowd buyers, a few at a time (guest sign-in writes MySQL). */
async function addCrowdBuyers(world: RunWorld, count: number): Promise<void> {
  await inParallel(count, 4, async (index) => {
    await world.newBuyer(index % API_INSTANCES, true);
  });
}

function crowdBuyers(world: RunWorld): Buyer[] {
  return world.buyers.filter((buyer) => buyer.crowd);
}

/**
 * Tokens some client was promised (2xx): the replays that matter most. `fallback`: only those the
 * Redis-down fallback sold (`201`), whose buyers Redis learns of later, by a load.
 */
function promisedTokens(world: RunWorld, fallback = false): TokenUse[] {
  const promised = new Set(
    world.history.operations
      .filter((operation) => operation.outcome === 'ok' && (!fallback || operation.status === 201))
      .map((operation) => operation.subject),
  );
  return world.tokens.filter((use) => promised.has(use.token));
}

/** Quantity 1 mostly, up to the limit sometimes: units above one per buyer exercise the limit in units. */
function quantity(next: () => number, perUserLimit: number): number {
  const roll = next();
  return roll < 0.7 ? 1 : Math.min(perUserLimit, roll < 0.9 ? 2 : 3);
}

/**
 * A fresh purchase by a crowd buyer: a token minted on one instance, spent on another (or the same). In a
 * room sale the token needs the buyer's pass: without one the attempt is their step in the room (a join,
 * a poll as advised), and the purchase follows only if it brought a pass.
 */
async function freshPurchase(
  world: RunWorld,
  buyer: Buyer,
  units: number,
  mintApi: number,
  buyApi: number,
  next: () => number,
) {
  const token = world.roomNow ? await roomStep(world, buyer, mintApi, next) : await world.mintFor(buyer, mintApi);
  if (!token) return;
  const use = { token, buyer: buyer.index, quantity: units };
  world.tokens.push(use);
  await world.purchase('buy', use, buyApi, true);
}

/**
 * `crowd(n)`: n purchase attempts at once (at most CROWD_CONCURRENCY in flight) across both API
 * instances: about two in three fresh purchases by crowd buyers (new ones signed in first, quantities
 * above one now and then), one in three replays of tokens already sent — promised ones first, each to an
 * instance drawn anew, so one token meets both processes. Every answer goes into the history.
 */
export async function crowd(world: RunWorld, size: number, seed: number): Promise<void> {
  const next = random(seed);
  const known = world.buyers.length;
  await addCrowdBuyers(world, Math.max(1, Math.ceil(size / ATTEMPTS_PER_NEW_BUYER)));
  const buyers = crowdBuyers(world);
  // Half the fresh purchases by the buyers signed in now: during an outage, buyers only the fallback knows.
  const newcomers = buyers.filter((buyer) => buyer.index >= known);
  if (buyers.length === 0) return; // MySQL paused: nobody could sign in
  const deadline = Date.now() + CROWD_MAX_MS;
  await inParallel(size, CROWD_CONCURRENCY, async () => {
    if (Date.now() > deadline) return;
    const api = Math.floor(next() * API_INSTANCES);
    if (next() < 1 / 3 && world.tokens.length > 0) {
      const promised = promisedTokens(world);
      const pool = promised.length > 0 && next() < 0.6 ? promised : world.tokens;
      await world.purchase('replay', pool[Math.floor(next() * pool.length)]!, api, true);
      return;
    }
    const among = newcomers.length > 0 && next() < 0.5 ? newcomers : buyers;
    const buyer = among[Math.floor(next() * among.length)]!;
    const mintApi = Math.floor(next() * API_INSTANCES);
    await freshPurchase(world, buyer, quantity(next, world.sale.perUserLimit), mintApi, api, next);
  });
}

/**
 * Sold-out traffic that never stops: from the run's start until the final read is over, a fresh
 * purchase every TRICKLE_EVERY_MS (a new crowd buyer now and then), and every third request a replay of a
 * promised token (mostly one the fallback sold, while there are such), alternating the instances. Once the sale is sold out this is what sets, renews and
 * consults each instance's sold-out flag (apps/api/src/purchase/strategies/redis-lua/sold-out-gate.ts) — during faults, and
 * across quiet, when the flag's knowledge of its buyers must still be right.
 */
export class SoldOutTrickle {
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(private readonly world: RunWorld) {}

  start(): void {
    this.running = this.loop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.running;
  }

  private async loop(): Promise<void> {
    const next = random(Date.now());
    for (let step = 0; !this.stopped; step++) {
      const started = Date.now();
      const api = step % API_INSTANCES;
      const fallbackSold = step % 3 === 2 && next() < 0.7 ? promisedTokens(this.world, true) : [];
      const promised = step % 3 !== 2 ? [] : fallbackSold.length > 0 ? fallbackSold : promisedTokens(this.world);
      if (promised.length > 0) {
        await this.world.purchase('replay', promised[Math.floor(next() * promised.length)]!, api, true);
      } else {
        if (step % 10 === 0) await addCrowdBuyers(this.world, 1);
        const buyers = crowdBuyers(this.world);
        const buyer = buyers[Math.floor(next() * buyers.length)];
        if (buyer) await freshPurchase(this.world, buyer, quantity(next, this.world.sale.perUserLimit), api, api, next);
      }
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, TRICKLE_EVERY_MS - (Date.now() - started))));
    }
  }
}

/** Runs `task(0..count-1)` with at most `concurrency` at once. */
async function inParallel(count: number, concurrency: number, task: (index: number) => Promise<void>): Promise<void> {
  let nextIndex = 0;
  const lanes = Array.from({ length: Math.min(concurrency, count) }, async () => {
    while (nextIndex < count) await task(nextIndex++);
  });
  await Promise.all(lanes);
}
