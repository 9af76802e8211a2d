import { OrderLifecycle, StockLeases } from '@flash-sale/stock';
import { type OrderEntity, OrderQueryRepository, ReplicaReads, SaleRepository } from '@flash-sale/db';
import { DomainError, ErrorCode, RETURNED_STATUSES, saleIdOfOrderNumber } from '@flash-sale/domain';
import { buyerBucket, ReservationScripts, SaleState } from '@flash-sale/redis';
import { Injectable } from '@nestjs/common';
import type { AuthUser } from '../common/auth-user';
import { SaleCatalog } from '../sales/sale-catalog';
import { type OrderView, orderViewOfReservation, orderViewOfRow } from './order.view';

const MAX_LISTED_ORDERS = 100;
/** Reservations become rows within seconds; sales that ended longer ago than this hold no QUEUED ones. */
const QUEUED_LOOKBACK_MS = 60 * 60 * 1000;

@Injectable()
export class OrdersService {
  constructor(
    private readonly orders: OrderQueryRepository,
    private readonly sales: SaleRepository,
    private readonly catalog: SaleCatalog,
    private readonly saleRedis: SaleState,
    private readonly lifecycle: OrderLifecycle,
    private readonly scripts: ReservationScripts,
    private readonly leases: StockLeases,
    private readonly replicaReads: ReplicaReads,
  ) {}

  /**
   * The caller's written order row, for a status change. Someone else's is a 404 (as for reads); one
   * still QUEUED cannot change yet: 409.
   */
  async ownWrittenOrder(caller: AuthUser, orderNo: string): Promise<OrderEntity> {
    const row = saleIdOfOrderNumber(orderNo) ? await this.orders.findByOrderNo(orderNo) : null;
    if (row && row.userId === caller.id) return row;
    // Only the owner changes an order: an admin may read anyone's, but paying or cancelling it is a 404.
    if (row) throw new DomainError(ErrorCode.OrderNotFound, `No order ${orderNo}`);
    const view = await this.get({ ...caller, role: 'guest' }, orderNo); // 404 unless the caller's QUEUED one
    throw new DomainError(ErrorCode.InvalidTransition, `Order ${orderNo} is ${view.status}; try again in a moment`);
  }

  /**
   * PENDING_PAYMENT → CANCELLED by its owner: the unit goes back to MySQL (same transaction), the
   * buyer's slot is freed and a lease hands the unit to Redis, so anyone — the canceller included —
   * can buy it again.
   */
  async cancel(caller: AuthUser, orderNo: string): Promise<OrderView> {
    const order = await this.ownWrittenOrder(caller, orderNo);
    const result = await this.lifecycle.returnUnits(orderNo, 'CANCELLED');
    const now = result.order ?? order;
    // Also when this call lost to another: the release script frees the buyer's hold only once.
    if (RETURNED_STATUSES.includes(now.status)) {
      const sale = await this.catalog.get(now.saleId);
      await this.scripts.release(buyerBucket(sale, now.userId), orderNo);
    }
    // The unit is back in MySQL's `available`: lease it to Redis again so the next buyer can have it.
    if (result.changed) await this.leases.topUp(now.saleId);
    if (!result.changed && now.status !== 'CANCELLED') {
      throw new DomainError(ErrorCode.InvalidTransition, `Order ${orderNo} is ${now.status} and cannot be cancelled`);
    }
    return orderViewOfRow(now);
  }

  /** Owner or admin; anyone else gets the same 404 as for a missing order (no existence leak). */
  async get(caller: AuthUser, orderNo: string): Promise<OrderView> {
    const notFound = new DomainError(ErrorCode.OrderNotFound, `No order ${orderNo}`);
    const saleId = saleIdOfOrderNumber(orderNo);
    if (!saleId) throw notFound;
    const row = await this.orders.findByOrderNo(orderNo);
    if (row) {
      if (row.userId !== caller.id && caller.role !== 'admin') throw notFound;
      const view = orderViewOfRow(row);
      const paymentReference = await this.orders.paymentReference(orderNo);
      return paymentReference ? { ...view, paymentReference } : view;
    }
    const sale = await this.catalog.get(saleId).catch((error: unknown) => {
      if (error instanceof DomainError) throw notFound; // no such sale: no such order either
      throw error;
    });
    const reservation = await this.saleRedis.reservation(sale, orderNo);
    if (!reservation || (reservation.userId !== caller.id && caller.role !== 'admin')) throw notFound;
    return orderViewOfReservation(reservation, sale);
  }

  /** The caller's orders, newest first: written rows plus reservations still QUEUED. */
  async listOwn(caller: AuthUser): Promise<OrderView[]> {
    // The replica once it holds every write committed before now (the buyer's latest order, payment or
    // cancel included), else the primary (ReplicaReads).
    const orders = await this.replicaReads.currentOrders();
    const [rows, recentSales] = await Promise.all([
      orders.newestOfUser(caller.id, MAX_LISTED_ORDERS),
      this.sales.endingAfter(new Date(Date.now() - QUEUED_LOOKBACK_MS)),
    ]);
    const reservations = (
      await Promise.all(
        recentSales.map(async (sale) =>
          (await this.saleRedis.reservationsOf(buyerBucket(sale, caller.id), caller.id)).map((reservation) => ({
            reservation,
            sale,
          })),
        ),
      )
    ).flat();
    const written = new Set(rows.map((row) => row.orderNo));
    const unwritten = reservations.filter(({ reservation }) => !written.has(reservation.orderNo));
    // A reservation missing from this page of rows may still be an older row; ask MySQL once.
    const olderWritten = await orders.writtenAmong(unwritten.map((u) => u.reservation.orderNo));
    const queued = unwritten
      .filter(({ reservation }) => !olderWritten.has(reservation.orderNo))
      .map(({ reservation, sale }) => orderViewOfReservation(reservation, sale));
    return [...queued, ...rows.map(orderViewOfRow)]
      .sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0))
      .slice(0, MAX_LISTED_ORDERS);
  }
}
