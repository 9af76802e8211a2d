import { SaleBooksRepository } from '@flash-sale/db';
import { auditVerdict, compareBooks, emptyOrdersByStatus, type OrdersByStatus } from '@flash-sale/domain';
import { SaleRedisRepository } from '@flash-sale/redis';
import { Injectable } from '@nestjs/common';
import { OrderQueue } from '../purchase/order-queue';
import { SaleCatalog } from '../sales/sale-catalog';

/** Queue states in which a job will still run and write its order. */
const PENDING_JOB_STATES = new Set(['waiting', 'active', 'delayed', 'prioritized', 'waiting-children']);

export interface AuditView {
  saleId: string;
  stock: number;
  remaining: number;
  held: number;
  ordersByStatus: OrdersByStatus;
  oversold: number;
  duplicateOrders: number;
  lostReservations: number;
  ok: boolean;
  /** Redis vs MySQL, now (see compareBooks); 0 when they agree. */
  drift: number;
  /** What the reconciliation job last published for this sale, if it has run. */
  lastReconciliation: { drift: number } | null;
  books: {
    redisRemaining: number;
    queuedUnits: number;
    held: number;
    unitsBeingReturned: number;
    mysqlAvailable: number;
    unitsAboveUserLimit: number;
    ordersWithoutOwnReservation: number;
    redisBooksBalance: boolean;
    mysqlBooksBalance: boolean;
  };
  checkedAt: string;
}

/**
 * The invariants of DESIGN.md for one sale, recomputed from what MySQL and Redis hold, never from
 * counters the purchase path keeps about itself. Meant for quiet moments (after a queue drains):
 * mid-burst it can see a reservation a moment before its row.
 */
@Injectable()
export class AuditService {
  constructor(
    private readonly catalog: SaleCatalog,
    private readonly saleBooks: SaleBooksRepository,
    private readonly saleRedis: SaleRedisRepository,
    private readonly orderQueue: OrderQueue,
  ) {}

  async audit(saleId: string): Promise<AuditView> {
    const sale = await this.catalog.get(saleId);
    const redisBacked = sale.strategy === 'redis-lua';
    const [mysql, redisSnapshot, lastDrift] = await Promise.all([
      this.saleBooks.read(sale.id),
      redisBacked ? this.saleRedis.snapshot(sale.id) : undefined,
      redisBacked ? this.saleRedis.lastReconciledDrift(sale.id) : undefined,
    ]);
    if (!mysql) throw new Error(`Sale ${sale.id} vanished from MySQL`);
    // A MySQL-only sale has a single ledger: MySQL stands in for Redis, every return already applied.
    const redis = redisSnapshot ?? {
      remaining: mysql.available,
      reservations: [],
      returned: new Map(mysql.rows.map((row) => [row.orderNo, row.quantity])),
    };
    const books = compareBooks({
      rows: mysql.rows,
      reservations: redis.reservations,
      returnedInRedis: redis.returned,
      redisRemaining: redis.remaining,
      mysqlAvailable: mysql.available,
    });

    const ordersByStatus = emptyOrdersByStatus();
    for (const row of mysql.rows) ordersByStatus[row.status] += 1;
    // An unwritten reservation is QUEUED while its job can still run, lost otherwise.
    const jobStates = await Promise.all(
      books.unwritten.map((reservation) => this.orderQueue.stateOf(reservation.orderNo)),
    );
    let queuedUnits = 0;
    let lostReservations = 0;
    books.unwritten.forEach((reservation, i) => {
      if (PENDING_JOB_STATES.has(jobStates[i] ?? 'unknown')) {
        ordersByStatus.QUEUED += 1;
        if (!redis.returned.has(reservation.orderNo)) queuedUnits += reservation.quantity;
      } else {
        lostReservations += 1;
      }
    });

    const verdict = auditVerdict({
      stock: mysql.stock,
      remaining: redis.remaining,
      held: books.held,
      queuedUnits,
      mysqlAvailable: mysql.available,
      unitsBeingReturned: books.unitsBeingReturned,
      unitsAboveUserLimit: mysql.unitsAboveUserLimit,
      ordersWithoutOwnReservation: redisBacked ? books.ordersWithoutOwnReservation : 0,
      lostReservations,
    });
    return {
      saleId: sale.id,
      stock: mysql.stock,
      remaining: redis.remaining,
      held: books.held,
      ordersByStatus,
      oversold: verdict.oversold,
      duplicateOrders: verdict.duplicateOrders,
      lostReservations: verdict.lostReservations,
      ok: verdict.ok,
      drift: books.drift,
      lastReconciliation: lastDrift === undefined ? null : { drift: lastDrift },
      books: {
        redisRemaining: redis.remaining,
        queuedUnits,
        held: books.held,
        unitsBeingReturned: books.unitsBeingReturned,
        mysqlAvailable: mysql.available,
        unitsAboveUserLimit: mysql.unitsAboveUserLimit,
        ordersWithoutOwnReservation: redisBacked ? books.ordersWithoutOwnReservation : 0,
        redisBooksBalance: verdict.redisBooksBalance,
        mysqlBooksBalance: verdict.mysqlBooksBalance,
      },
      checkedAt: new Date().toISOString(),
    };
  }
}
