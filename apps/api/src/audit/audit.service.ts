import { OrderEntity } from '@flash-sale/db';
import {
  auditVerdict,
  emptyOrdersByStatus,
  HOLDING_STATUSES,
  type OrdersByStatus,
  type OrderStatus,
  RETURNED_STATUSES,
} from '@flash-sale/domain';
import { SaleRedisRepository } from '@flash-sale/redis';
import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
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
    @InjectRepository(OrderEntity) private readonly orders: Repository<OrderEntity>,
    private readonly catalog: SaleCatalog,
    private readonly saleRedis: SaleRedisRepository,
    private readonly orderQueue: OrderQueue,
  ) {}

  async audit(saleId: string): Promise<AuditView> {
    const sale = await this.catalog.get(saleId);
    const [rows, mysqlAvailable, unitsAboveUserLimit, redis] = await Promise.all([
      this.orders.find({ select: { orderNo: true, status: true, quantity: true }, where: { saleId: sale.id } }),
      this.mysqlAvailable(sale.id),
      this.unitsAboveUserLimit(sale.id, sale.perUserLimit),
      this.saleRedis.snapshot(sale.id),
    ]);

    const ordersByStatus = emptyOrdersByStatus();
    const rowByOrderNo = new Map<string, { status: OrderStatus; quantity: number }>();
    let held = 0;
    let unitsBeingReturned = 0;
    for (const row of rows) {
      rowByOrderNo.set(row.orderNo, row);
      ordersByStatus[row.status] += 1;
      if (HOLDING_STATUSES.includes(row.status)) held += row.quantity;
      // MySQL gave the unit back (or never took it) but Redis has not been compensated yet.
      if (RETURNED_STATUSES.includes(row.status) && !redis.returned.has(row.orderNo))
        unitsBeingReturned += row.quantity;
    }

    const reservedOrderNos = new Set(redis.reservations.map((reservation) => reservation.orderNo));
    const ordersWithoutOwnReservation = rows.filter((row) => !reservedOrderNos.has(row.orderNo)).length;

    let queuedUnits = 0;
    let lostReservations = 0;
    const unwritten = redis.reservations.filter((reservation) => !rowByOrderNo.has(reservation.orderNo));
    const jobStates = await Promise.all(unwritten.map((reservation) => this.orderQueue.stateOf(reservation.orderNo)));
    unwritten.forEach((reservation, i) => {
      if (PENDING_JOB_STATES.has(jobStates[i] ?? 'unknown')) {
        ordersByStatus.QUEUED += 1;
        if (!redis.returned.has(reservation.orderNo)) queuedUnits += reservation.quantity;
      } else {
        lostReservations += 1;
      }
    });

    const verdict = auditVerdict({
      stock: sale.stock,
      remaining: redis.remaining,
      held,
      queuedUnits,
      mysqlAvailable,
      unitsBeingReturned,
      unitsAboveUserLimit,
      ordersWithoutOwnReservation,
      lostReservations,
    });
    return {
      saleId: sale.id,
      stock: sale.stock,
      remaining: redis.remaining,
      held,
      ordersByStatus,
      oversold: verdict.oversold,
      duplicateOrders: verdict.duplicateOrders,
      lostReservations: verdict.lostReservations,
      ok: verdict.ok,
      books: {
        redisRemaining: redis.remaining,
        queuedUnits,
        held,
        unitsBeingReturned,
        mysqlAvailable,
        unitsAboveUserLimit,
        ordersWithoutOwnReservation,
        redisBooksBalance: verdict.redisBooksBalance,
        mysqlBooksBalance: verdict.mysqlBooksBalance,
      },
      checkedAt: new Date().toISOString(),
    };
  }

  private async mysqlAvailable(saleId: string): Promise<number> {
    const [row] = (await this.orders.query('SELECT available FROM sales WHERE id = ?', [saleId])) as {
      available: number;
    }[];
    return Number(row?.available ?? 0);
  }

  private async unitsAboveUserLimit(saleId: string, perUserLimit: number): Promise<number> {
    const holding = HOLDING_STATUSES.map(() => '?').join(', ');
    const [row] = (await this.orders.query(
      `SELECT COALESCE(SUM(GREATEST(units - ?, 0)), 0) AS excess
         FROM (SELECT SUM(quantity) AS units FROM orders
                WHERE sale_id = ? AND status IN (${holding}) GROUP BY user_id) AS per_user`,
      [perUserLimit, saleId, ...HOLDING_STATUSES],
    )) as { excess: string | number }[];
    return Number(row?.excess ?? 0);
  }
}
