import { StockLeases } from '@flash-sale/stock';
import { type MySqlSaleBooks, SaleBooksRepository, StockLeaseRepository } from '@flash-sale/db';
import {
  compareBooks,
  RETURNED_STATUSES,
  type SaleLayout,
  sellsFromRedis,
  unappliedGiveBackUnits,
} from '@flash-sale/domain';
import {
  buyerBucket,
  ReservationScripts,
  SaleActivity,
  DriftBoard,
  HandoffStream,
  SaleState,
  type SaleRedisSnapshot,
} from '@flash-sale/redis';
import { type AppConfig, InjectAppConfig } from '@flash-sale/config';
import { Injectable, Logger } from '@nestjs/common';
import { SaleRetention } from './sale-retention';

interface Ledgers {
  mysql: MySqlSaleBooks | undefined;
  /** The give-backs MySQL has applied, read with `mysql` (before Redis). */
  appliedReturnKeys: Set<string>;
  redis: SaleRedisSnapshot;
}

/** Sales that ended longer ago than this are repaired only when something marks them active again. */
const RECENT_MS = 3_600_000;
/**
 * Marks older than this leave the active-sales index: longer than any reader's window (this job's,
 * recovery's), so the index stays as small as the last hour's activity.
 */
const ACTIVITY_KEPT_MS = 3_600_000;

export interface ReconciliationRun {
  /** Sales visited in full. */
  reconciled: number;
  /** Drift per visited sale that Redis holds (published for /metrics and the audit). */
  drifts: Map<string, number>;
}

export interface IdleSaleCheck {
  /**
   * Sales whose Redis incarnation was verified, and those of them that had to restart (a live one) or
   * had a stale copy replaced (an ended one).
   */
  verified: number;
  restarted: number;
  /** Ended sales whose keys have their retention expiry. */
  retired: number;
}

/**
 * Keeps Redis honest against MySQL and publishes the drift (0 when they agree) for /metrics and the audit
 * (docs/failure-model.md, "Recovery and reconciliation"). Its work follows activity, not the number of
 * sales: `run` visits the sales marked active lately and those whose MySQL books need work,
 * `checkIdleSales` checks every sale cheaply for what no mark announces (a lost or stale copy), and
 * `reconcileEverySale` visits every recent one after the worker's Redis connection comes back. A visit
 * repairs only what it can prove, and every repair is idempotent: two workers running it at once do no harm.
 */
@Injectable()
export class StockReconciliation {
  private readonly logger = new Logger(StockReconciliation.name);

  constructor(
    private readonly saleBooks: SaleBooksRepository,
    private readonly saleRedis: SaleState,
    private readonly handoff: HandoffStream,
    private readonly drifts: DriftBoard,
    private readonly scripts: ReservationScripts,
    private readonly leaseRepository: StockLeaseRepository,
    private readonly leases: StockLeases,
    private readonly activity: SaleActivity,
    private readonly retention: SaleRetention,
    @InjectAppConfig() private readonly config: AppConfig,
  ) {}

  /** The periodic run: the sales active lately and those whose books need work. */
  async run(now = Date.now()): Promise<ReconciliationRun> {
    const [active, needingRepair] = await Promise.all([
      this.activity.activeSince(now - this.config.lifecycle.reconcileActiveWindowMs),
      this.leaseRepository.salesNeedingRepair(new Date(now - RECENT_MS)),
    ]);
    const result = await this.reconcileAll(new Set([...active, ...needingRepair]));
    await this.activity.forgetBefore(now - Math.max(ACTIVITY_KEPT_MS, this.config.lifecycle.reconcileActiveWindowMs));
    return result;
  }

  /** Every live or recently ended Redis-backed sale, in full (after the worker's Redis came back). */
  async reconcileEverySale(now = Date.now()): Promise<ReconciliationRun> {
    const sales = await this.leaseRepository.redisBackedSales(new Date(now - RECENT_MS));
    return this.reconcileAll(new Set(sales.map((sale) => sale.saleId)));
  }

  /**
   * The slow safety pass over every Redis-backed sale, active or not, at a few round trips each: its
   * incarnation is verified (StockLeases.verifyIncarnation: a live sale whose Redis lost it or holds a
   * stale copy gets the next incarnation, an ended one's stale copy is replaced; either marks the sale,
   * so the next run repairs the rest); an ended one still within its retention gets it (SaleRetention),
   * in case no visit after its end did.
   */
  async checkIdleSales(now = Date.now()): Promise<IdleSaleCheck> {
    const result: IdleSaleCheck = { verified: 0, restarted: 0, retired: 0 };
    const horizon = Math.max(RECENT_MS, this.config.lifecycle.saleRedisRetentionMs);
    for (const { saleId, endsAt } of await this.leaseRepository.redisBackedSales(new Date(now - horizon))) {
      const ended = endsAt.getTime() <= now;
      result.verified += 1;
      // An ended sale too: its window is aligned (a copy that reaches past MySQL's end would still sell),
      // and a stale copy of it is replaced, or the books would read units that are not there.
      if ((await this.leases.verifyIncarnation(saleId)) === 'restarted') {
        result.restarted += 1;
        this.logger.warn(
          ended
            ? `Sale ${saleId}: ended, and Redis held a stale copy of it; replaced, its leases are in doubt`
            : `Sale ${saleId}: idle, and Redis had lost its incarnation; its leases are in doubt`,
        );
      }
      if (ended && (await this.retention.retireIfWritten(saleId, endsAt, now))) result.retired += 1;
    }
    return result;
  }

  private async alignWindow(saleId: string): Promise<void> {
    if (await this.leases.alignWindow(saleId)) {
      this.logger.warn(`Sale ${saleId}: Redis's copy of its window differed from MySQL's; aligned`);
    }
  }

  private async reconcileAll(saleIds: ReadonlySet<string>): Promise<ReconciliationRun> {
    const drifts = new Map<string, number>();
    for (const saleId of saleIds) {
      const drift = await this.reconcile(saleId);
      if (drift !== undefined) drifts.set(saleId, drift);
      if (drift) this.logger.warn(`Sale ${saleId}: Redis and MySQL drift by ${drift} unit(s)`);
    }
    await this.drifts.publish(drifts);
    return { reconciled: saleIds.size, drifts };
  }

  /**
   * Repairs one sale (see the class comment), retires it if it has ended, and returns its drift
   * afterwards (undefined when Redis does not hold it).
   */
  async reconcile(saleId: string): Promise<number | undefined> {
    const sale = await this.leaseRepository.saleRow(saleId);
    // A MySQL-only sale is marked too when its orders change: nothing to compare.
    if (!sale || !sellsFromRedis(sale.strategy)) return undefined;
    const layout: SaleLayout = { id: saleId, buckets: sale.buckets };
    await this.alignWindow(saleId);
    let drift = await this.repair(layout);
    if (await this.returnLeftoverLeases(layout, sale.endsAt)) drift = await this.repair(layout);
    await this.retention.retireIfWritten(saleId, sale.endsAt);
    return drift;
  }

  private async repair(sale: SaleLayout): Promise<number | undefined> {
    const saleId = sale.id;
    if ((await this.leases.verifyIncarnation(saleId)) === 'restarted') {
      this.logger.warn(
        `Sale ${saleId}: Redis lost its incarnation (no state, or a stale copy); its leases are in doubt`,
      );
    }
    let { mysql, redis, appliedReturnKeys } = await this.read(sale);
    if (!mysql || mysql.redisEpoch === 0) return undefined;

    let changed = false;
    if (mysql.inDoubt > 0 && !this.hasUnwrittenHandOffs(mysql, redis) && (await this.settlingGraceOver(saleId))) {
      const returned = await this.leaseRepository.settle(saleId);
      if (returned > 0) this.logger.warn(`Sale ${saleId}: ${returned} in-doubt unit(s) returned to available`);
      changed = true;
    }
    if ((await this.leases.regrantPending(saleId, mysql.redisEpoch)) > 0) changed = true;
    const buyerOf = new Map(redis.reservations.map((reservation) => [reservation.orderNo, reservation.userId]));
    if (
      mysql.rows.some(
        (row) => row.leaseEpoch === null && !RETURNED_STATUSES.includes(row.status) && !buyerOf.has(row.orderNo),
      )
    ) {
      await this.leases.ensureLoaded(saleId);
      changed = true;
    }
    for (const row of mysql.rows) {
      const buyer = buyerOf.get(row.orderNo);
      if (RETURNED_STATUSES.includes(row.status) && buyer !== undefined && !redis.returned.has(row.orderNo)) {
        if ((await this.scripts.release(buyerBucket(sale, buyer), row.orderNo)) === 'released') changed = true;
      }
    }
    if (changed) {
      // Units may be back in `available`: lease them to Redis for the next buyers.
      await this.leases.topUp(saleId);
      ({ mysql, redis, appliedReturnKeys } = await this.read(sale));
      if (!mysql) return undefined;
    }
    if (!redis.loaded) return undefined;
    const ledger = await this.leaseRepository.ledger(saleId);
    return compareBooks({
      rows: mysql.rows,
      reservations: redis.reservations,
      returnedInRedis: redis.returned,
      redisBalance: redis.remaining,
      currentEpoch: mysql.redisEpoch,
      liveLeased: mysql.leased - mysql.inDoubt,
      pendingLeaseUnits: ledger.pending,
      unappliedGiveBackUnits: unappliedGiveBackUnits(redis.givebacks, appliedReturnKeys, mysql.redisEpoch),
    }).drift;
  }

  /**
   * Units still leased to a sale that ended go back to MySQL (StockLeases.returnLeasesOfEndedSale),
   * once its end is a grace period behind (Redis judges the end by its own clock) and every
   * reservation of it is written.
   */
  private async returnLeftoverLeases(sale: SaleLayout, endsAt: Date): Promise<boolean> {
    if (endsAt.getTime() + this.config.lifecycle.recoveryGraceMs > Date.now()) return false;
    if ((await this.handoff.backlog(sale)) > 0) return false;
    if (!(await this.leases.returnLeasesOfEndedSale(sale.id))) return false;
    this.logger.log(`Sale ${sale.id} has ended: the units still leased to it go back to MySQL`);
    return true;
  }

  /** MySQL first, then Redis: a reservation happens before its row, so Redis read later shows it too. */
  private async read(sale: SaleLayout): Promise<Ledgers> {
    const [mysql, appliedReturnKeys] = await Promise.all([
      this.saleBooks.read(sale.id),
      this.leaseRepository.appliedReturnKeys(sale.id),
    ]);
    return { mysql, appliedReturnKeys, redis: await this.saleRedis.snapshot(sale) };
  }

  /**
   * A hand-off a worker took before Redis lost it is still written for a few seconds after; settling
   * waits that long, so such an order finds its units still leased rather than re-leased to others.
   */
  private async settlingGraceOver(saleId: string): Promise<boolean> {
    const inDoubtForMs = await this.leaseRepository.inDoubtForMs(saleId);
    return inDoubtForMs === undefined || inDoubtForMs >= this.config.lifecycle.recoveryGraceMs;
  }

  /** Reservations of earlier incarnations that Redis still has and MySQL has not written yet. */
  private hasUnwrittenHandOffs(mysql: MySqlSaleBooks, redis: SaleRedisSnapshot): boolean {
    const written = new Set(mysql.rows.map((row) => row.orderNo));
    return redis.reservations.some(
      (reservation) =>
        reservation.epoch > 0 &&
        reservation.epoch < mysql.redisEpoch &&
        !written.has(reservation.orderNo) &&
        !redis.returned.has(reservation.orderNo),
    );
  }
}
