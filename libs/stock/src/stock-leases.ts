import type { SaleLeaseRow, SaleWindowRepository, StockLeaseRepository } from '@flash-sale/db';
import type { SaleEdit, SaleLayout } from '@flash-sale/domain';
import type { HandoffStream, ReservationScripts, SaleActivity, SaleState } from '@flash-sale/redis';
import { BucketGiveBacks } from './bucket-give-backs';
import { type Coalesced, coalesce, singleFlight } from './in-flight';
import { LeaseGrants } from './lease-grants';
import type { LeasePolicy } from './lease-policy';
import { type LoadOutcome, SaleIncarnations } from './sale-incarnations';
import { hasEnded, isRedisBacked, NEVER_OPENED, sellsFromLeases } from './sale-lease-row';
import { SaleWindows } from './sale-windows';

/**
 * `ended`: the sale is over and Redis holds no stale copy of it; `restarted` for an ended sale: its stale
 * copy was replaced (see verifyIncarnation).
 */
export type VerifyOutcome = 'current' | 'restarted' | 'not-redis-backed' | 'ended';

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
  private readonly grants: LeaseGrants;
  private readonly giveBacks: BucketGiveBacks;
  private readonly incarnations: SaleIncarnations;
  /** Absent where tests drive leases by hand: the window is then only what loads write. */
  private readonly windows: SaleWindows | undefined;

  constructor(
    private readonly repository: StockLeaseRepository,
    scripts: ReservationScripts,
    saleRedis: SaleState,
    readonly policy: LeasePolicy,
    /** The active-sales index; every grant and load marks the sale. Absent where tests drive leases by hand. */
    activity?: SaleActivity,
    windowRepository?: SaleWindowRepository,
    /** Drops the hand-off entry of a give-back MySQL has applied. Absent, a worker applies it again (a no-op). */
    handoff?: HandoffStream,
  ) {
    this.grants = new LeaseGrants(repository, scripts, saleRedis, policy, activity);
    this.giveBacks = new BucketGiveBacks(repository, scripts, saleRedis, handoff);
    this.incarnations = new SaleIncarnations(repository, scripts, saleRedis, activity);
    this.windows = windowRepository && new SaleWindows(windowRepository, scripts, saleRedis, activity);
  }

  /**
   * An admin's edit of a Redis-backed sale's window (and its other fields, in the same MySQL write):
   * applied to MySQL and Redis, or refused (see SaleWindows.change).
   */
  changeWindow(saleId: string, changes: SaleEdit): Promise<void> {
    if (!this.windows) throw new Error('StockLeases was built without the sale window repository');
    return this.windows.change(saleId, changes);
  }

  /** Puts MySQL's window into every bucket of the sale whose copy differs; returns whether one did. */
  async alignWindow(saleId: string, sale?: SaleLeaseRow): Promise<boolean> {
    if (!this.windows) return false;
    const known = sale && {
      startsAt: sale.startsAt,
      endsAt: sale.endsAt,
      perUserLimit: sale.perUserLimit,
      version: sale.windowVersion,
      buckets: sale.buckets,
    };
    return this.windows.align(saleId, known);
  }

  /**
   * Leases up to one lease's worth of `available` units to one bucket of the sale now (the given one, or
   * the one with the smallest balance), unless the sale is over or not Redis-backed. Returns the units
   * Redis received (0: MySQL has none left to lease, or Redis is on another incarnation and must be
   * loaded first).
   */
  topUp(saleId: string, bucket?: number): Promise<number> {
    return coalesce(this.topUps, `${saleId}/${bucket ?? 'any'}`, () => this.grants.lease(saleId, bucket));
  }

  /**
   * A buyer's bucket refused for lack of stock: fill it. First from MySQL (a lease); when MySQL has
   * nothing left and the sale has other buckets, they give back part of their balance (give-back-4.lua: at
   * least `wanted` units when they have them, else half of theirs), MySQL takes the units back into
   * `available`, and a lease hands them to the buyer's bucket. Returns the units that moved; 0 only when
   * MySQL and every other bucket were empty and no unit was on its way meanwhile — a lease recorded before
   * the look or during it, a give-back not yet applied (units-moving.ts) — which is when the sale is sold
   * out. Before the other buckets give back, Redis is checked for a stale copy of the sale, and a stale
   * copy found then or by MySQL refusing a give-back is replaced by the next incarnation (the answer is
   * then "not proven sold out": 1). Concurrent calls for one bucket share a run, which starts after the
   * caller asked.
   */
  refill(sale: SaleLayout, bucket: number, wanted: number): Promise<number> {
    return coalesce(this.refills, `${sale.id}/${bucket}`, () => this.refillOnce(sale.id, bucket, wanted));
  }

  private async refillOnce(saleId: string, home: number, wanted: number): Promise<number> {
    const sale = await this.repository.saleRow(saleId);
    if (!sale) return 0;
    // Read before the look: a lease recorded by then may be granted to a bucket the look reads as empty.
    const before = await this.repository.movementMark(saleId);
    const leased = await this.topUp(saleId, home);
    if (leased > 0 || !isRedisBacked(sale) || hasEnded(sale)) return leased;
    if (sale.buckets > 1) {
      // The top-up may have waited on MySQL long enough for Redis to come back from an older copy of its
      // data; a bucket of that copy would give back units MySQL has written as orders. Checked first (a
      // refill only follows a SOLD_OUT, so the reads cost nothing on the reserved path), and MySQL refuses
      // such a give-back anyway if the copy arrives after the check. Either way the copy is replaced by the
      // next incarnation and the buyer tries again: not proven sold out.
      if ((await this.verifyIncarnation(saleId)) === 'restarted') return STALE_COPY_REPLACED;
      const { gathered, stale } = await this.giveBacks.gather(saleId, sale, home, wanted);
      if (stale) {
        await this.replaceStaleCopy(saleId, sale.redisEpoch, sale.buckets);
        return STALE_COPY_REPLACED;
      }
      // The whole of what MySQL has goes to this bucket: it is what the buyer is waiting for. Units another
      // bucket's buyer took first still prove the sale was not sold out.
      const moved = Math.max(await this.grants.lease(saleId, home, false), gathered);
      if (moved > 0) return moved;
    }
    // Not proven sold out: the caller retries, and answers "try again" rather than SOLD_OUT.
    return (await this.giveBacks.unitsMovedSince(saleId, sale, before)) ? 1 : 0;
  }

  /**
   * A sale just created: its first incarnation is opened in MySQL and loaded into every bucket, then
   * each bucket is topped up. Unlike ensureLoaded, nothing is waited for: no other process has seen the
   * sale, and MySQL opens the first epoch for one caller only.
   */
  openNewSale(saleId: string): Promise<LoadOutcome> {
    return singleFlight(this.loads, saleId, () => this.openFirstIncarnation(saleId));
  }

  /** The first incarnation opened and loaded, then each bucket topped up (inside a load's single flight). */
  private async openFirstIncarnation(saleId: string): Promise<LoadOutcome> {
    const outcome = await this.incarnations.openFirst(saleId);
    if (outcome !== 'opened' && outcome !== 'refreshed') return outcome;
    const sale = await this.repository.saleRow(saleId);
    for (let bucket = 0; bucket < (sale?.buckets ?? 0); bucket++) await this.topUp(saleId, bucket);
    return outcome;
  }

  /**
   * Makes Redis sell the sale on MySQL's current incarnation: a refresh when Redis has it (adding
   * what MySQL sold itself meanwhile, with its tokens), a new incarnation when Redis lost it or never
   * had it. Then tops up. Safe to call any time, from any instance.
   */
  ensureLoaded(saleId: string): Promise<LoadOutcome> {
    return singleFlight(this.loads, saleId, async () => {
      let sale = await this.repository.saleRow(saleId);
      if (!sellsFromLeases(sale)) return 'not-redis-backed';
      // Its creation stopped before the first incarnation opened: nothing can be in flight to wait for.
      if (sale.redisEpoch === NEVER_OPENED) return this.openFirstIncarnation(saleId);
      let redisEpochs = await this.incarnations.bucketEpochs(saleId, sale);
      if (redisEpochs.some((epoch) => epoch === undefined || epoch < sale!.redisEpoch)) {
        // As in verifyOnce: another process may be between opening the next incarnation in MySQL and
        // loading it into Redis. Look once more after its load before restarting the sale a second time.
        await this.incarnations.awaitLoadInFlight(saleId, sale.redisEpoch);
        sale = await this.repository.saleRow(saleId);
        if (!sale) return 'not-redis-backed';
        redisEpochs = await this.incarnations.bucketEpochs(saleId, sale);
      }
      const current = sale.redisEpoch;
      const outcome = redisEpochs.every((epoch) => epoch === current)
        ? await this.incarnations.load(saleId, sale, current, true)
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
  restartIncarnation(saleId: string, lostEpoch: number): Promise<LoadOutcome> {
    return this.incarnations.restart(saleId, lostEpoch);
  }

  /**
   * An ended sale sells nothing more, so the units still leased to it — Redis's unsold balance — go back
   * to MySQL. Its incarnation is closed as a lost one would be: MySQL opens the next epoch with those
   * units in doubt, Redis is loaded on it with nothing to sell, and reconciliation settles them to
   * `available` once no hand-off of the old incarnation is left unwritten. The caller checks that the
   * sale's hand-off backlog is empty. Returns whether it closed the incarnation.
   */
  returnLeasesOfEndedSale(saleId: string): Promise<boolean> {
    return this.incarnations.closeEnded(saleId);
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
   * What keeps Redis's SOLD_OUT from being final, read from one row: units in doubt after an outage, or
   * units in `available` again — a settlement of doubted units, a cancel or an expiry that gave them back
   * after the caller's refill found none. Settlement moves units from doubt to `available` in one
   * transaction, so a single read sees them on one side or the other; two reads could miss them between.
   */
  async unsettledOrReturned(saleId: string): Promise<{ inDoubt: number; available: number }> {
    const sale = await this.repository.saleRow(saleId);
    return { inDoubt: sale?.inDoubt ?? 0, available: sale?.available ?? 0 };
  }

  /**
   * Leases MySQL recorded whose Redis grant is not confirmed yet: units on their way to a bucket, or held
   * up there until reconciliation grants them again. While there is one the sale is not proven sold out
   * (units-moving.ts), and a sold-out flag must not be kept.
   */
  async leasesOnTheirWay(saleId: string): Promise<number> {
    return (await this.repository.movementMark(saleId)).pendingLeases;
  }

  /**
   * Checks that Redis holds the real current incarnation of the sale, not a stale copy (a restart from
   * an old AOF, a failover to a replica that lagged): every lease MySQL saw granted must be in Redis,
   * and Redis must remember reserving at least the units MySQL wrote from it. MySQL is read first: a
   * grant precedes its mark in MySQL and a reservation precedes its row, so a Redis that kept its data
   * always passes. A copy that fails starts the next incarnation. Returns whether it did. An ended
   * sale is never restarted (see restartIncarnation), but a stale copy of it is replaced (verifyEnded).
   */
  verifyIncarnation(saleId: string): Promise<VerifyOutcome> {
    // One at a time per sale in this process: a second check made while the first is restarting would
    // see MySQL's new epoch before Redis is loaded with it, and restart the sale once more.
    return singleFlight(this.verifications, saleId, () => this.verifyOnce(saleId));
  }

  private async verifyOnce(saleId: string, lookedAgain = false): Promise<VerifyOutcome> {
    const sale = await this.repository.saleRow(saleId);
    if (!isRedisBacked(sale)) return 'not-redis-backed';
    // Before anything else, and for an ended sale too: a copy of the window that reaches past MySQL's
    // end (an edit that failed half way, a copy restored from before an edit) sells after the end.
    await this.alignWindow(saleId, sale);
    if (hasEnded(sale)) return this.verifyEnded(saleId, sale);
    const check = await this.incarnations.check(saleId, sale);
    if (check === 'held') return 'current';
    // Another process may be restarting the sale right now, between opening the next incarnation in
    // MySQL and loading it into Redis: Redis then lacks the epoch MySQL names only for that moment.
    // Look once more after its load before declaring a loss, or two processes would each restart the sale.
    if (!lookedAgain && check === 'behind') {
      await this.incarnations.awaitLoadInFlight(saleId, sale.redisEpoch);
      return this.verifyOnce(saleId, true);
    }
    return this.replaceStaleCopy(saleId, sale.redisEpoch, sale.buckets);
  }

  /**
   * An ended sale sells nothing more and its keys expire on purpose, so a bucket without them is no
   * loss. A copy that is there must be the real one, though: a stale one (a lagging replica promoted, an
   * old file restored after the end) lacks reservations MySQL has written and counts units MySQL no
   * longer leases to it, and the books, the audit and the retention read it. It is replaced by closing
   * its incarnation (SaleIncarnations.replaceEndedCopy); reconciliation then settles what was leased.
   */
  private async verifyEnded(saleId: string, sale: SaleLeaseRow, lookedAgain = false): Promise<VerifyOutcome> {
    const epochs = await this.incarnations.bucketEpochs(saleId, sale);
    if (epochs.every((epoch) => epoch === undefined)) return 'ended';
    const check = await this.incarnations.check(saleId, sale, 'ignored');
    if (check === 'held') return 'ended';
    // As for a live sale: another process may be loading the epoch it has just opened.
    if (!lookedAgain && check === 'behind') {
      await this.incarnations.awaitLoadInFlight(saleId, sale.redisEpoch);
      const again = await this.repository.saleRow(saleId);
      return again ? this.verifyEnded(saleId, again, true) : 'ended';
    }
    return (await this.incarnations.replaceEndedCopy(saleId, sale.redisEpoch)) ? 'restarted' : 'ended';
  }

  /** Redis's copy of `epoch` is lost or stale: the next incarnation, each bucket topped up. */
  private async replaceStaleCopy(saleId: string, epoch: number, buckets: number): Promise<VerifyOutcome> {
    // The sale may have ended since it was read: then nothing restarts.
    if ((await this.restartIncarnation(saleId, epoch)) === 'ended') return 'ended';
    for (let bucket = 0; bucket < buckets; bucket++) await this.topUp(saleId, bucket);
    return 'restarted';
  }

  /** Grants again the leases MySQL made for the current incarnation that Redis never confirmed. */
  regrantPending(saleId: string, epoch: number): Promise<number> {
    return this.grants.regrantPending(saleId, epoch);
  }
}

/**
 * What a refill answers once it found Redis on a stale copy and replaced it: not a count of units, only
 * "not proven sold out", so the buyer's purchase tries again on the next incarnation.
 */
const STALE_COPY_REPLACED = 1;
