import type { SaleLeaseRow, StockLeaseRepository } from '@flash-sale/db';
import { bucketsOf, buyerBucket, type ReservationScripts, type SaleActivity, type SaleState } from '@flash-sale/redis';
import { markSaleChanged } from './sale-marks';
import { hasEnded, isRedisBacked, layoutOf, NEVER_OPENED, sellsFromLeases } from './sale-lease-row';

/**
 * How long a process's mark that it is loading an incarnation lasts: far longer than a load takes (one
 * script per bucket), short enough that a process that died mid-load holds the others up only briefly.
 */
const LOAD_MARK_TTL_MS = 5_000;

/** How often a process waiting for another's load looks whether it is over. */
const LOAD_POLL_MS = 20;

/** `ended`: the sale is over and Redis does not hold its current incarnation; nothing was loaded. */
export type LoadOutcome = 'opened' | 'refreshed' | 'not-redis-backed' | 'ended';

/**
 * What Redis holds of the sale's current incarnation: all of it (`held`), not yet every bucket on it
 * (`behind`: lost, or another process is loading it right now), or a stale copy of it (`stale`).
 */
export type IncarnationCheck = 'held' | 'behind' | 'stale';

/**
 * A sale's incarnations in Redis: loading the one MySQL names into every bucket, opening the next when
 * Redis lost one, and telling whether Redis holds the real current one.
 */
export class SaleIncarnations {
  constructor(
    private readonly repository: StockLeaseRepository,
    private readonly scripts: ReservationScripts,
    private readonly saleRedis: SaleState,
    private readonly activity?: SaleActivity,
  ) {}

  /**
   * Opens the next incarnation in MySQL (the leases of `lostEpoch` become in doubt) and loads it into
   * Redis; nothing for a sale that has ended (see StockLeases.restartIncarnation).
   */
  async restart(saleId: string, lostEpoch: number): Promise<LoadOutcome> {
    const current = await this.repository.saleRow(saleId);
    if (!sellsFromLeases(current)) return 'not-redis-backed';
    if (hasEnded(current)) return 'ended';
    return this.opening(saleId, lostEpoch + 1, async () => {
      const epoch = await this.repository.openEpoch(saleId, lostEpoch);
      const sale = await this.repository.saleRow(saleId);
      if (!sale) return 'not-redis-backed';
      return this.load(saleId, sale, epoch, false);
    });
  }

  /** Opens a new sale's first incarnation and loads it (see StockLeases.openNewSale). */
  openFirst(saleId: string): Promise<LoadOutcome> {
    // Conditional on the epoch being NEVER_OPENED: of two callers, the second loads what the first opened.
    return this.restart(saleId, NEVER_OPENED);
  }

  /** Closes the incarnation of an ended sale that still has units leased (see StockLeases.returnLeasesOfEndedSale). */
  async closeEnded(saleId: string): Promise<boolean> {
    const sale = await this.repository.saleRow(saleId);
    if (!isRedisBacked(sale) || !hasEnded(sale)) return false;
    if (sale.leased - sale.inDoubt <= 0) return false;
    return this.close(saleId, sale.redisEpoch);
  }

  /**
   * Replaces a stale copy of an ended sale's incarnation `staleEpoch` (see StockLeases.verifyIncarnation):
   * closed as closeEnded closes one, whatever is still leased to it.
   */
  async replaceEndedCopy(saleId: string, staleEpoch: number): Promise<boolean> {
    return this.close(saleId, staleEpoch);
  }

  /**
   * MySQL opens the next epoch (what is still leased to `epoch` becomes in doubt, for reconciliation to
   * settle) and every bucket is loaded on it: nothing to sell, and every holding order MySQL has as a
   * reservation. False when another process closed `epoch` first.
   */
  private async close(saleId: string, epoch: number): Promise<boolean> {
    return this.opening(saleId, epoch + 1, async () => {
      const next = await this.repository.openEpoch(saleId, epoch);
      if (next !== epoch + 1) return false;
      const closed = await this.repository.saleRow(saleId);
      if (closed) await this.load(saleId, closed, next, false);
      return true;
    });
  }

  /**
   * Runs `open` — MySQL opens incarnation `epoch`, then every bucket is loaded with it — under a mark in
   * Redis that says so, set before MySQL moves. Between the two steps MySQL names an epoch Redis does not
   * hold yet; a process that looks then (`awaitLoadInFlight`) finds the mark and waits for the load,
   * instead of taking it for a loss and opening one more incarnation, which would put the fresh leases
   * in doubt. A Redis that loses the mark lost the load too, so nothing waits for a load that is gone.
   */
  private async opening<T>(saleId: string, epoch: number, open: () => Promise<T>): Promise<T> {
    const mark = await this.scripts.markIncarnationLoading(saleId, epoch, LOAD_MARK_TTL_MS);
    try {
      return await open();
    } finally {
      await this.scripts.clearIncarnationLoading(saleId, mark).catch(() => undefined);
    }
  }

  /**
   * Waits while some process is loading an incarnation at least as new as `epoch` (the one MySQL named
   * when the caller found Redis behind it), until the load is over or its mark expired.
   */
  async awaitLoadInFlight(saleId: string, epoch: number): Promise<void> {
    const giveUpAt = Date.now() + LOAD_MARK_TTL_MS;
    for (;;) {
      const loading = await this.scripts.incarnationLoading(saleId);
      if (loading === undefined || loading < epoch || Date.now() >= giveUpAt) return;
      await new Promise((resolve) => setTimeout(resolve, LOAD_POLL_MS));
    }
  }

  /** Loads every bucket of the sale, each with the orders of its own buyers. */
  async load(saleId: string, sale: SaleLeaseRow, epoch: number, refresh: boolean): Promise<LoadOutcome> {
    const layout = layoutOf(saleId, sale);
    const orders = await this.repository.ordersToLoad(saleId, refresh);
    let opened = false;
    for (const bucket of bucketsOf(layout)) {
      const result = await this.scripts.load(
        bucket,
        {
          startsAt: sale.startsAt,
          endsAt: sale.endsAt,
          perUserLimit: sale.perUserLimit,
          stock: sale.stock,
          epoch,
          windowVersion: sale.windowVersion,
        },
        layout.buckets === 1
          ? orders
          : orders.filter((order) => buyerBucket(layout, order.userId).index === bucket.index),
      );
      if (result.kind === 'opened') opened = true;
    }
    // A sale whose end was moved into the future again must not lose its keys to the retention
    // expiry set when it had ended (SaleRetention); an ended one gets that expiry again, from
    // reconciliation, which the mark below sends to it.
    if (!hasEnded(sale)) await this.saleRedis.clearExpiry(layout);
    await markSaleChanged(this.activity, saleId);
    return opened ? 'opened' : 'refreshed';
  }

  /** The incarnation each bucket of the sale holds (undefined: none). */
  async bucketEpochs(saleId: string, sale: SaleLeaseRow): Promise<(number | undefined)[]> {
    const buckets = bucketsOf(layoutOf(saleId, sale));
    return Promise.all(buckets.map(async (bucket) => (await this.saleRedis.incarnation(bucket))?.epoch));
  }

  /**
   * The check of StockLeases.verifyIncarnation, MySQL read first. Every bucket is checked on its own: one
   * that lost its state loses the sale's incarnation. A bucket that kept its data has every lease MySQL
   * saw granted to it, remembers reserving at least the units MySQL wrote from it, and recorded every
   * give-back MySQL answered from it (with buckets). `absentBuckets: 'ignored'` judges only the
   * buckets that hold a copy (an ended sale's keys expire on purpose).
   */
  async check(
    saleId: string,
    sale: SaleLeaseRow,
    absentBuckets: 'lost' | 'ignored' = 'lost',
  ): Promise<IncarnationCheck> {
    const [granted, written, givenBack] = await Promise.all([
      this.repository.leasesOf(saleId, sale.redisEpoch, 'GRANTED'),
      this.repository.unitsWrittenFrom(saleId, sale.redisEpoch),
      sale.buckets > 1 ? this.repository.giveBacksOf(saleId, sale.redisEpoch) : new Map<number, string[]>(),
    ]);
    const buckets = bucketsOf(layoutOf(saleId, sale));
    const redis = await Promise.all(buckets.map((bucket) => this.saleRedis.incarnation(bucket)));
    if (redis.some((held) => held && held.epoch > sale.redisEpoch)) return 'held'; // another instance moved on
    const lost = buckets.some((bucket, i) => {
      const held = redis[i];
      if (!held && absentBuckets === 'ignored') return false;
      return (
        !held ||
        held.epoch < sale.redisEpoch ||
        granted.some((lease) => lease.bucket === bucket.index && !held.grants.has(lease.leaseId)) ||
        (written.get(bucket.index) ?? 0) > held.reservedUnits ||
        // A copy from before a give-back MySQL took would sell those units a second time.
        (givenBack.get(bucket.index) ?? []).some((returnKey) => !held.giveBacks.has(returnKey))
      );
    });
    if (!lost) return 'held';
    return redis.some((held) => !held || held.epoch < sale.redisEpoch) ? 'behind' : 'stale';
  }
}
