import { type MySqlSaleBooks, SaleBooksRepository, StockLeaseRepository, StockLeases } from '@flash-sale/db';
import { compareBooks, RETURNED_STATUSES } from '@flash-sale/domain';
import { ReservationScripts, SaleRedisRepository, type SaleRedisSnapshot } from '@flash-sale/redis';
import type { AppConfig } from '@flash-sale/config';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { LIFECYCLE_CONFIG } from '../worker.tokens';

interface Ledgers {
  mysql: MySqlSaleBooks | undefined;
  redis: SaleRedisSnapshot;
}

/** Sales that ended longer ago than this are left alone. */
const RECENT_MS = 3_600_000;

/**
 * Keeps Redis honest against MySQL for every recent Redis-backed sale, and publishes the drift (0 when
 * they agree) for /metrics and the audit. It repairs what it can prove, in this order:
 * 1. Redis lost the sale's incarnation — no state, or a stale copy (a lease MySQL saw granted is
 *    missing, or MySQL wrote more units from the incarnation than Redis remembers reserving): the
 *    next incarnation starts, and the old leases are in doubt; Redis never sells on them again.
 * 2. In-doubt leases whose surviving hand-offs are all written go back to `available` (settled).
 * 3. Leases MySQL made whose Redis grant never happened (a process died in between) are granted.
 * 4. Orders MySQL sold itself (the Redis-down fallback) that Redis does not know are loaded into it.
 * 5. Returned orders whose buyer Redis still counts are released.
 * Every repair is idempotent, so two workers running it at once do no harm.
 */
@Injectable()
export class StockReconciliation {
  private readonly logger = new Logger(StockReconciliation.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly saleBooks: SaleBooksRepository,
    private readonly saleRedis: SaleRedisRepository,
    private readonly scripts: ReservationScripts,
    private readonly leaseRepository: StockLeaseRepository,
    private readonly leases: StockLeases,
    @Inject(LIFECYCLE_CONFIG) private readonly config: AppConfig['lifecycle'],
  ) {}

  /** Returns the drift per sale it published. */
  async run(): Promise<Map<string, number>> {
    const sales = (await this.dataSource.query(`SELECT id FROM sales WHERE strategy = 'redis-lua' AND ends_at > ?`, [
      new Date(Date.now() - RECENT_MS),
    ])) as { id: string }[];
    const drifts = new Map<string, number>();
    for (const { id } of sales) {
      const saleId = String(id);
      const drift = await this.reconcile(saleId);
      if (drift !== undefined) drifts.set(saleId, drift);
      if (drift) this.logger.warn(`Sale ${saleId}: Redis and MySQL drift by ${drift} unit(s)`);
    }
    await this.saleRedis.publishDrift(drifts);
    return drifts;
  }

  /** Repairs one sale (see the class comment) and returns its drift afterwards. */
  async reconcile(saleId: string): Promise<number | undefined> {
    if ((await this.leases.verifyIncarnation(saleId)) === 'restarted') {
      this.logger.warn(
        `Sale ${saleId}: Redis lost its incarnation (no state, or a stale copy); its leases are in doubt`,
      );
    }
    let { mysql, redis } = await this.read(saleId);
    if (!mysql || mysql.redisEpoch === 0) return undefined;

    let changed = false;
    if (mysql.inDoubt > 0 && !this.hasUnwrittenHandOffs(mysql, redis) && (await this.settlingGraceOver(saleId))) {
      const returned = await this.leaseRepository.settle(saleId);
      if (returned > 0) this.logger.warn(`Sale ${saleId}: ${returned} in-doubt unit(s) returned to available`);
      changed = true;
    }
    if ((await this.leases.regrantPending(saleId, mysql.redisEpoch)) > 0) changed = true;
    const reserved = new Set(redis.reservations.map((reservation) => reservation.orderNo));
    if (
      mysql.rows.some(
        (row) => row.leaseEpoch === null && !RETURNED_STATUSES.includes(row.status) && !reserved.has(row.orderNo),
      )
    ) {
      await this.leases.ensureLoaded(saleId);
      changed = true;
    }
    for (const row of mysql.rows) {
      if (RETURNED_STATUSES.includes(row.status) && reserved.has(row.orderNo) && !redis.returned.has(row.orderNo)) {
        if ((await this.scripts.release(saleId, row.orderNo)) === 'released') changed = true;
      }
    }
    if (changed) {
      // Units may be back in `available`: lease them to Redis for the next buyers.
      await this.leases.topUp(saleId);
      ({ mysql, redis } = await this.read(saleId));
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
    }).drift;
  }

  /** MySQL first, then Redis: a reservation happens before its row, so Redis read later shows it too. */
  private async read(saleId: string): Promise<Ledgers> {
    const mysql = await this.saleBooks.read(saleId);
    return { mysql, redis: await this.saleRedis.snapshot(saleId) };
  }

  /**
   * A hand-off a worker took before Redis lost it is still written for a few seconds after; settling
   * waits that long, so such an order finds its units still leased rather than re-leased to others.
   */
  private async settlingGraceOver(saleId: string): Promise<boolean> {
    const inDoubtForMs = await this.leaseRepository.inDoubtForMs(saleId);
    return inDoubtForMs === undefined || inDoubtForMs >= this.config.recoveryGraceMs;
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
