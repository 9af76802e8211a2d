import { type LeaseLedger, OrderQueryRepository, SaleBooksRepository, StockLeaseRepository } from '@flash-sale/db';
import {
  auditVerdict,
  type BookedReservation,
  compareBooks,
  emptyOrdersByStatus,
  type SaleLayout,
  sellsFromRedis,
  unappliedGiveBackUnits,
} from '@flash-sale/domain';
import type { Audit } from '@flash-sale/contract';
import { DriftBoard, HandoffStream, SaleState } from '@flash-sale/redis';
import { Injectable } from '@nestjs/common';
import { SaleCatalog } from '../sales/sale-catalog';

/** The contract's Audit, with every field this API always computes, and the books behind the verdict. */
export interface AuditView extends Audit {
  /** Redis vs MySQL over the live leases, now (see compareBooks); 0 when they agree. */
  drift: number;
  /** The sale ended and its Redis keys expired (SALE_REDIS_RETENTION_MS): audited from MySQL alone. */
  retiredFromRedis: boolean;
  /** What the reconciliation job last published for this sale, if it has run. */
  lastReconciliation: { drift: number } | null;
  /**
   * The lease ledger (docs/architecture.md "Who owns the stock"): units granted, converted to orders, in
   * doubt, returned.
   */
  leases: LeaseLedger & { epoch: number };
  books: {
    redisBalance: number;
    queuedUnits: number;
    held: number;
    mysqlAvailable: number;
    mysqlLeased: number;
    inDoubt: number;
    unitsAboveUserLimit: number;
    ordersWithoutOwnReservation: number;
    redisBooksBalance: boolean;
    mysqlBooksBalance: boolean;
  };
  checkedAt: string;
}

/**
 * The invariants of docs/architecture.md ("What must never happen") for one sale, recomputed from what
 * MySQL and Redis hold, never from counters the purchase path keeps about itself. Meant for quiet moments
 * (after a queue drains): mid-burst it can see a reservation a moment before its row.
 */
@Injectable()
export class AuditService {
  constructor(
    private readonly catalog: SaleCatalog,
    private readonly saleBooks: SaleBooksRepository,
    private readonly orderQueries: OrderQueryRepository,
    private readonly saleRedis: SaleState,
    private readonly handoff: HandoffStream,
    private readonly drifts: DriftBoard,
    private readonly leaseRepository: StockLeaseRepository,
  ) {}

  async audit(saleId: string): Promise<AuditView> {
    const sale = await this.catalog.get(saleId);
    const redisBacked = sellsFromRedis(sale.strategy);
    // MySQL first, Redis after: a reservation precedes its row, so Redis read later knows every
    // reservation MySQL has a row for.
    const [mysql, ledger, appliedReturnKeys] = await Promise.all([
      this.saleBooks.read(sale.id),
      this.leaseRepository.ledger(sale.id),
      this.leaseRepository.appliedReturnKeys(sale.id),
    ]);
    if (!mysql) throw new Error(`Sale ${sale.id} vanished from MySQL`);
    const [snapshot, lastDrift] = redisBacked
      ? await Promise.all([this.saleRedis.snapshot(sale), this.drifts.of(sale.id)])
      : [undefined, undefined];
    // An ended sale whose Redis keys expired (retention) is MySQL's alone: nothing is left to compare.
    const retiredFromRedis = snapshot !== undefined && !snapshot.loaded && sale.endsAt <= new Date();
    const redis = retiredFromRedis ? undefined : snapshot;
    const comparesRedis = redis !== undefined;
    const books = compareBooks({
      rows: mysql.rows,
      reservations: redis?.reservations ?? [],
      returnedInRedis: redis?.returned ?? new Map(),
      redisBalance: redis?.remaining ?? 0,
      currentEpoch: mysql.redisEpoch,
      liveLeased: mysql.leased - mysql.inDoubt,
      pendingLeaseUnits: ledger.pending,
      unappliedGiveBackUnits: redis ? unappliedGiveBackUnits(redis.givebacks, appliedReturnKeys, mysql.redisEpoch) : 0,
    });

    const ordersByStatus = emptyOrdersByStatus();
    for (const row of mysql.rows) ordersByStatus[row.status] += 1;
    // The view is MySQL's moment: a reservation with no row then is QUEUED if its hand-off entry was
    // still in the stream a moment later, or if its row was committed meanwhile (a worker acknowledges
    // an entry only after its commit, so a reservation being written is found one way or the other).
    // Lost: neither — no row and no hand-off.
    const { queuedUnits, queued, lost } = comparesRedis
      ? await this.classifyUnwritten(sale, books.unwritten)
      : { queuedUnits: 0, queued: 0, lost: 0 };
    ordersByStatus.QUEUED += queued;
    const lostReservations = lost;

    const ordersWithoutOwnReservation = comparesRedis ? books.ordersWithoutOwnReservation : 0;
    // Units still leased to a retired sale stay with it (it sells nothing more): not a drift.
    const drift = retiredFromRedis ? 0 : books.drift;
    const verdict = auditVerdict({
      stock: mysql.stock,
      held: books.held,
      mysqlAvailable: mysql.available,
      mysqlLeased: mysql.leased,
      inDoubt: mysql.inDoubt,
      drift,
      unitsAboveUserLimit: mysql.unitsAboveUserLimit,
      ordersWithoutOwnReservation,
      lostReservations,
      recordedOversoldPeak: mysql.oversoldPeak,
    });
    const redisBalance = redis?.remaining ?? 0;
    return {
      saleId: sale.id,
      stock: mysql.stock,
      remaining: redisBalance + mysql.available,
      held: books.held,
      ordersByStatus,
      oversold: verdict.oversold,
      oversoldPeak: verdict.oversoldPeak,
      duplicateOrders: verdict.duplicateOrders,
      lostReservations: verdict.lostReservations,
      ok: verdict.ok,
      drift,
      retiredFromRedis,
      lastReconciliation: lastDrift === undefined ? null : { drift: lastDrift },
      leases: { ...ledger, epoch: mysql.redisEpoch },
      books: {
        redisBalance,
        queuedUnits,
        held: books.held,
        mysqlAvailable: mysql.available,
        mysqlLeased: mysql.leased,
        inDoubt: mysql.inDoubt,
        unitsAboveUserLimit: mysql.unitsAboveUserLimit,
        ordersWithoutOwnReservation,
        redisBooksBalance: verdict.redisBooksBalance,
        mysqlBooksBalance: verdict.mysqlBooksBalance,
      },
      checkedAt: new Date().toISOString(),
    };
  }

  private async classifyUnwritten(
    sale: SaleLayout,
    unwritten: readonly BookedReservation[],
  ): Promise<{ queued: number; queuedUnits: number; lost: number }> {
    if (unwritten.length === 0) return { queued: 0, queuedUnits: 0, lost: 0 };
    const inStream = await this.handoff.orderNumbers(sale);
    const notInStream = unwritten.filter((reservation) => !inStream.has(reservation.orderNo));
    const writtenSince = await this.orderQueries.writtenAmong(notInStream.map((reservation) => reservation.orderNo));
    let queued = 0;
    let queuedUnits = 0;
    for (const reservation of unwritten) {
      if (inStream.has(reservation.orderNo) || writtenSince.has(reservation.orderNo)) {
        queued += 1;
        queuedUnits += reservation.quantity;
      }
    }
    return { queued, queuedUnits, lost: unwritten.length - queued };
  }
}
