import { randomUUID } from 'node:crypto';
import {
  bucketsOf,
  buyerBucket,
  type GrantResult,
  type ReservationScripts,
  type SaleActivity,
  type SaleBucket,
  type SaleLayout,
  type SaleRedisRepository,
} from '@flash-sale/redis';
import { type SaleLeaseRow, StockLeaseRepository } from './stock-lease.repository';

export interface LeasePolicy {
  /** Units one lease hands to Redis (at most what MySQL has available). */
  leaseSize: number;
  /** A purchase that leaves Redis with fewer units than this asks for the next lease in the background. */
  lowWater: number;
}

/** `ended`: the sale is over (nothing is checked or restarted then; see restartIncarnation). */
export type VerifyOutcome = 'current' | 'restarted' | 'not-redis-backed' | 'ended';

/** `ended`: the sale is over and Redis does not hold its current incarnation; nothing was loaded. */
export type LoadOutcome = 'opened' | 'refreshed' | 'not-redis-backed' | 'ended';

/**
 * The stock lease protocol (docs/architecture.md "Who owns the stock"), used by the API and the worker:
 * a lease is a MySQL transaction (`available` → `leased`, a ledger row with its own id) followed by an
 * idempotent Redis grant of that id to the sale's current incarnation. Redis can only sell what was
 * granted; if it loses a sale's state, a new incarnation starts with nothing and the old leases are
 * in doubt until reconciliation settles them.
 *
 * Top-ups are coalesced per sale in this process: a burst that crosses the low-water mark asks MySQL
 * once or twice, not once per buyer, and every caller gets the answer of a run that started after it
 * asked, so units returned a moment ago are never missed by a buyer about to be told SOLD_OUT.
 */
export class StockLeases {
  private readonly topUps = new Map<string, Coalesced<number>>();
  private readonly refills = new Map<string, Coalesced<number>>();
  private readonly loads = new Map<string, Promise<LoadOutcome>>();
  private readonly verifications = new Map<string, Promise<VerifyOutcome>>();

  constructor(
    private readonly repository: StockLeaseRepository,
    private readonly scripts: ReservationScripts,
    private readonly saleRedis: SaleRedisRepository,
    readonly policy: LeasePolicy,
    /** The active-sales index; every grant and load marks the sale. Absent where tests drive leases by hand. */
    private readonly activity?: SaleActivity,
  ) {}

  /**
   * Leases up to one lease's worth of `available` units to one bucket of the sale now (the given one, or
   * the one with the smallest balance), unless the sale is over or not Redis-backed. Returns the units
   * Redis received (0: MySQL has none left to lease, or Redis is on another incarnation and must be
   * loaded first).
   */
  topUp(saleId: string, bucket?: number): Promise<number> {
    return coalesce(this.topUps, `${saleId}/${bucket ?? 'any'}`, () => this.leaseOnce(saleId, bucket));
  }

  /**
   * A buyer's bucket refused for lack of stock: fill it. First from MySQL (a lease); when MySQL has
   * nothing left and the sale has other buckets, they give back part of their balance (give-back-4.lua: at
   * least `wanted` units when they have them, else half of theirs), MySQL takes the units back into
   * `available`, and a lease hands them to the buyer's bucket. Returns the units that moved; 0 only when
   * MySQL and every other bucket were empty and no unit was moving between them meanwhile (a lease or a
   * give-back of another process), which is when the sale is sold out. Concurrent calls for one bucket
   * share a run. With one bucket this is `topUp`.
   */
  refill(sale: SaleLayout, bucket: number, wanted: number): Promise<number> {
    if (sale.buckets === 1) return this.topUp(sale.id, bucket);
    return coalesce(this.refills, `${sale.id}/${bucket}`, () => this.refillOnce(sale.id, bucket, wanted));
  }

  private async refillOnce(saleId: string, home: number, wanted: number): Promise<number> {
    const sale = await this.repository.saleRow(saleId);
    if (!sale || sale.buckets < 2) return this.topUp(saleId, home);
    const before = await this.repository.movementMark(saleId);
    const leased = await this.topUp(saleId, home);
    if (leased > 0 || sale.strategy !== 'redis-lua' || sale.redisEpoch === 0 || hasEnded(sale)) return leased;
    const layout = layoutOf(saleId, sale);
    const balances = await this.saleRedis.balances(layout);
    let gathered = 0;
    for (let step = 1; step < sale.buckets && gathered < wanted; step++) {
      const index = (home + step) % sale.buckets;
      const balance = balances[index] ?? 0;
      if (balance <= 0) continue;
      const returnKey = `${saleId}:${index}:${randomUUID()}`;
      const donor = bucketsOf(layout)[index]!;
      const result = await this.scripts.giveBack(
        donor,
        sale.redisEpoch,
        returnKey,
        Math.max(Math.min(wanted, balance), Math.ceil(balance / 2)),
      );
      if (result.kind !== 'given-back' || result.units === 0) continue;
      // Applied here at once. The hand-off entry is there for a process that dies before this line: a
      // worker then applies it; here it is dropped, so nothing waits on the donor's stream.
      await this.repository.applyGiveBack(saleId, {
        returnKey,
        bucket: index,
        units: result.units,
        epoch: sale.redisEpoch,
      });
      if (result.entryId) await this.saleRedis.dropHandoffEntry(donor, result.entryId);
      gathered += result.units;
    }
    // The whole of what MySQL has goes to this bucket: it is what the buyer is waiting for. Units another
    // bucket's buyer took first still prove the sale was not sold out.
    const moved = Math.max(await this.leaseOnce(saleId, home, false), gathered);
    if (moved > 0) return moved;
    const [recordedGiveBacks, after] = await Promise.all([
      this.saleRedis.giveBackCount(layout),
      this.repository.movementMark(saleId),
    ]);
    const unitsWereMoving =
      after.lastRowId !== before.lastRowId || after.pendingLeases > 0 || recordedGiveBacks > after.appliedGiveBacks;
    // Not proven sold out: the caller retries, and answers "try again" rather than SOLD_OUT.
    return unitsWereMoving ? 1 : 0;
  }

  /**
   * Makes Redis sell the sale on MySQL's current incarnation: a refresh when Redis has it (adding
   * what MySQL sold itself meanwhile, with its tokens), a new incarnation when Redis lost it or never
   * had it. Then tops up. Safe to call any time, from any instance.
   */
  ensureLoaded(saleId: string): Promise<LoadOutcome> {
    return singleFlight(this.loads, saleId, async () => {
      let sale = await this.repository.saleRow(saleId);
      if (!sale || sale.strategy !== 'redis-lua') return 'not-redis-backed';
      let redisEpochs = await this.bucketEpochs(saleId, sale);
      if (redisEpochs.some((epoch) => epoch === undefined || epoch < sale!.redisEpoch)) {
        // As in verifyOnce: another process may be between opening the next incarnation in MySQL and
        // loading it into Redis. Look once more before restarting the sale a second time.
        await new Promise((resolve) => setTimeout(resolve, LOAD_IN_FLIGHT_MS));
        sale = await this.repository.saleRow(saleId);
        if (!sale) return 'not-redis-backed';
        redisEpochs = await this.bucketEpochs(saleId, sale);
      }
      const current = sale.redisEpoch;
      const outcome = redisEpochs.every((epoch) => epoch === current)
        ? await this.load(saleId, sale, current, true)
        : await this.restartIncarnation(saleId, current);
      for (let bucket = 0; bucket < sale.buckets; bucket++) await this.topUp(saleId, bucket);
      return outcome;
    });
  }

  /**
   * `ensureLoaded`, by a load that starts after this call: one already running may have read MySQL's
   * orders before the caller's latest one committed.
   */
  async ensureLoadedAfterNow(saleId: string): Promise<LoadOutcome> {
    await this.loads.get(saleId)?.catch(() => undefined);
    return this.ensureLoaded(saleId);
  }

  /**
   * Redis lost (or never had) incarnation `lostEpoch` of the sale, or holds a stale copy of it: open
   * the next incarnation in MySQL (the old leases become in doubt) and load it into Redis.
   *
   * Not for a sale that has ended: it sells nothing more, and its keys expire on purpose once its
   * reservations are written (the worker's SaleRetention), so their absence is no loss. A new
   * incarnation would only put its leases in doubt and bring the keys back.
   */
  async restartIncarnation(saleId: string, lostEpoch: number): Promise<LoadOutcome> {
    const current = await this.repository.saleRow(saleId);
    if (!current || current.strategy !== 'redis-lua') return 'not-redis-backed';
    if (hasEnded(current)) return 'ended';
    const epoch = await this.repository.openEpoch(saleId, lostEpoch);
    const sale = await this.repository.saleRow(saleId);
    if (!sale) return 'not-redis-backed';
    return this.load(saleId, sale, epoch, false);
  }

  /**
   * An ended sale sells nothing more, so the units still leased to it — Redis's unsold balance — go back
   * to MySQL. Its incarnation is closed as a lost one would be: MySQL opens the next epoch with those
   * units in doubt, Redis is loaded on it with nothing to sell, and reconciliation settles them to
   * `available` once no hand-off of the old incarnation is left unwritten. The caller checks that the
   * sale's hand-off backlog is empty. Returns whether it closed the incarnation.
   */
  async returnLeasesOfEndedSale(saleId: string): Promise<boolean> {
    const sale = await this.repository.saleRow(saleId);
    if (!sale || sale.strategy !== 'redis-lua' || sale.redisEpoch === 0 || !hasEnded(sale)) return false;
    if (sale.leased - sale.inDoubt <= 0) return false;
    const epoch = await this.repository.openEpoch(saleId, sale.redisEpoch);
    if (epoch !== sale.redisEpoch + 1) return false; // another process closed it first
    const closed = await this.repository.saleRow(saleId);
    if (closed) await this.load(saleId, closed, epoch, false);
    return true;
  }

  /**
   * Units MySQL has handed to Redis and not yet seen become orders (`leased`), and the part of them in
   * doubt. When MySQL has nothing left to sell or lease, these tell a buyer whether the sale is really
   * sold out or its last units are elsewhere (in an unreachable Redis, or awaiting settlement).
   */
  async unitsOutsideMySql(saleId: string): Promise<{ leased: number; inDoubt: number }> {
    const sale = await this.repository.saleRow(saleId);
    return { leased: sale?.leased ?? 0, inDoubt: sale?.inDoubt ?? 0 };
  }

  /**
   * Checks that Redis holds the real current incarnation of the sale, not a stale copy (a restart from
   * an old AOF, a failover to a replica that lagged): every lease MySQL saw granted must be in Redis,
   * and Redis must remember reserving at least the units MySQL wrote from it. MySQL is read first: a
   * grant precedes its mark in MySQL and a reservation precedes its row, so a Redis that kept its data
   * always passes. A copy that fails starts the next incarnation. Returns whether it did. An ended
   * sale is not checked: it sells nothing more, and its keys are meant to expire (see restartIncarnation).
   */
  verifyIncarnation(saleId: string): Promise<VerifyOutcome> {
    // One at a time per sale in this process: a second check made while the first is restarting would
    // see MySQL's new epoch before Redis is loaded with it, and restart the sale once more.
    return singleFlight(this.verifications, saleId, () => this.verifyOnce(saleId));
  }

  private async verifyOnce(saleId: string, lookedAgain = false): Promise<VerifyOutcome> {
    const sale = await this.repository.saleRow(saleId);
    if (!sale || sale.strategy !== 'redis-lua' || sale.redisEpoch === 0) return 'not-redis-backed';
    if (hasEnded(sale)) return 'ended';
    const [granted, written] = await Promise.all([
      this.repository.leasesOf(saleId, sale.redisEpoch, 'GRANTED'),
      this.repository.unitsWrittenFrom(saleId, sale.redisEpoch),
    ]);
    // Every bucket is checked on its own: one that lost its state loses the sale's incarnation.
    const buckets = bucketsOf(layoutOf(saleId, sale));
    const redis = await Promise.all(buckets.map((bucket) => this.saleRedis.incarnation(bucket)));
    if (redis.some((held) => held && held.epoch > sale.redisEpoch)) return 'current'; // another instance moved on
    const lost = buckets.some((bucket, i) => {
      const held = redis[i];
      return (
        !held ||
        held.epoch < sale.redisEpoch ||
        granted.some((lease) => lease.bucket === bucket.index && !held.grants.has(lease.leaseId)) ||
        (written.get(bucket.index) ?? 0) > held.reservedUnits
      );
    });
    if (!lost) return 'current';
    // Another process may be restarting the sale right now, between opening the next incarnation in
    // MySQL and loading it into Redis: Redis then lacks the epoch MySQL names only for that moment.
    // Look once more after it before declaring a loss, or two processes would each restart the sale.
    if (!lookedAgain && redis.some((held) => !held || held.epoch < sale.redisEpoch)) {
      await new Promise((resolve) => setTimeout(resolve, LOAD_IN_FLIGHT_MS));
      return this.verifyOnce(saleId, true);
    }
    // The sale may have ended since it was read: then nothing restarts.
    if ((await this.restartIncarnation(saleId, sale.redisEpoch)) === 'ended') return 'ended';
    for (const bucket of buckets) await this.topUp(saleId, bucket.index);
    return 'restarted';
  }

  /** Grants again the leases MySQL made for the current incarnation that Redis never confirmed. */
  async regrantPending(saleId: string, epoch: number): Promise<number> {
    const pending = await this.repository.leasesOf(saleId, epoch, 'PENDING');
    if (pending.length === 0) return 0;
    const sale = await this.repository.saleRow(saleId);
    if (!sale) return 0;
    const buckets = bucketsOf(layoutOf(saleId, sale));
    let granted = 0;
    for (const lease of pending) {
      const bucket = buckets[lease.bucket];
      if (!bucket) continue;
      // Only units this call added count: a lease whose owner granted it a moment ago (and has not
      // marked it yet) is no repair, and counting it would make the caller lease again.
      if ((await this.grant(bucket, lease.leaseId, epoch, lease.units)) === 'granted') granted += lease.units;
    }
    return granted;
  }

  /** Loads every bucket of the sale, each with the holding orders of its own buyers. */
  private async load(saleId: string, sale: SaleLeaseRow, epoch: number, refresh: boolean): Promise<LoadOutcome> {
    const layout = layoutOf(saleId, sale);
    const holding = await this.repository.holdingOrders(saleId, refresh);
    let opened = false;
    for (const bucket of bucketsOf(layout)) {
      const result = await this.scripts.load(
        bucket,
        { startsAt: sale.startsAt, endsAt: sale.endsAt, perUserLimit: sale.perUserLimit, stock: sale.stock, epoch },
        layout.buckets === 1
          ? holding
          : holding.filter((order) => buyerBucket(layout, order.userId).index === bucket.index),
      );
      if (result.kind === 'opened') opened = true;
    }
    // A sale whose end was moved into the future again must not lose its keys to the retention
    // expiry set when it had ended (SaleRetention); an ended one gets that expiry again, from
    // reconciliation, which the mark below sends to it.
    if (!hasEnded(sale)) await this.saleRedis.clearExpiry(layout);
    await this.mark(saleId);
    return opened ? 'opened' : 'refreshed';
  }

  /** The incarnation each bucket of the sale holds (undefined: none). */
  private async bucketEpochs(saleId: string, sale: SaleLeaseRow): Promise<(number | undefined)[]> {
    const buckets = bucketsOf(layoutOf(saleId, sale));
    return Promise.all(buckets.map(async (bucket) => (await this.saleRedis.incarnation(bucket))?.epoch));
  }

  private async leaseOnce(saleId: string, bucketIndex?: number, spread = true): Promise<number> {
    const sale = await this.repository.saleRow(saleId);
    if (!sale || sale.strategy !== 'redis-lua' || sale.redisEpoch === 0) return 0;
    if (sale.available === 0 || hasEnded(sale)) return 0;
    const buckets = bucketsOf(layoutOf(saleId, sale));
    const bucket = buckets[bucketIndex ?? (await this.emptiestBucket(saleId, sale))] ?? buckets[0]!;
    // Units given back to MySQL (a cancel, an expiry) all go to the emptiest bucket; a bucket's own
    // top-up takes its share of what is left, so the last units are spread.
    const lease = await this.repository.lease(
      saleId,
      sale.redisEpoch,
      this.policy.leaseSize,
      bucket.index,
      spread && bucketIndex !== undefined,
    );
    if (!lease) return 0;
    return (await this.grant(bucket, lease.leaseId, lease.epoch, lease.units)) === 'wrong-epoch' ? 0 : lease.units;
  }

  /** The bucket with the smallest balance (0 for a sale with one). */
  private async emptiestBucket(saleId: string, sale: SaleLeaseRow): Promise<number> {
    if (sale.buckets === 1) return 0;
    const balances = await this.saleRedis.balances(layoutOf(saleId, sale));
    let emptiest = 0;
    balances.forEach((balance, index) => {
      if ((balance ?? 0) < (balances[emptiest] ?? 0)) emptiest = index;
    });
    return emptiest;
  }

  /** The Redis half of a lease. A refused grant (Redis on another incarnation) stays PENDING, in MySQL. */
  private async grant(bucket: SaleBucket, leaseId: string, epoch: number, units: number): Promise<GrantResult['kind']> {
    const result = await this.scripts.grantLease(bucket, epoch, leaseId, units);
    if (result.kind === 'wrong-epoch') return result.kind;
    await this.repository.markGranted(leaseId);
    await this.mark(bucket.saleId);
    return result.kind;
  }

  /**
   * Whoever changes a sale marks it, so that reconciliation visits it (SaleActivity). Best effort: a
   * mark lost while Redis is unreachable is made up for by the full reconciliation that follows the
   * worker's reconnect, and a lost incarnation by the periodic check of idle sales.
   */
  private async mark(saleId: string): Promise<void> {
    await this.activity?.touch([saleId]).catch(() => undefined);
  }
}

function layoutOf(saleId: string, sale: SaleLeaseRow): SaleLayout {
  return { id: saleId, buckets: sale.buckets };
}

/** Longer than loading an incarnation into Redis takes (one script, then the grants), with room for a busy machine. */
const LOAD_IN_FLIGHT_MS = 1_000;

/** Over: it sells nothing more, and nothing is leased to it any more. */
function hasEnded(sale: SaleLeaseRow, now = Date.now()): boolean {
  return sale.endsAt.getTime() <= now;
}

function singleFlight<T>(inFlight: Map<string, Promise<T>>, key: string, run: () => Promise<T>): Promise<T> {
  const running = inFlight.get(key);
  if (running) return running;
  const started = run().finally(() => inFlight.delete(key));
  inFlight.set(key, started);
  return started;
}

interface Coalesced<T> {
  running: Promise<T>;
  next?: Promise<T>;
}

/** Runs `run` at most once at a time per key; calls made during a run share one follow-up run. */
function coalesce<T>(state: Map<string, Coalesced<T>>, key: string, run: () => Promise<T>): Promise<T> {
  const entry = state.get(key);
  if (entry?.next) return entry.next;
  const ignore = (): void => undefined;
  const mine: Promise<T> = (entry ? entry.running.then(ignore, ignore) : Promise.resolve())
    .then(() => {
      const now = state.get(key);
      if (now?.next === mine) state.set(key, { running: mine });
      return run();
    })
    .finally(() => {
      const now = state.get(key);
      if (now?.running === mine && !now.next) state.delete(key);
    });
  if (entry) entry.next = mine;
  else state.set(key, { running: mine });
  return mine;
}
