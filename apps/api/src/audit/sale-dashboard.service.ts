import type { OrdersByStatus, ReservationLatency, Sale, SaleFunnel } from '@flash-sale/contract';
import { ReplicaReads, RoomPlaceRepository } from '@flash-sale/db';
import { sellsFromRedis } from '@flash-sale/domain';
import { OrdersQueue } from '@flash-sale/queue';
import { HandoffStream } from '@flash-sale/redis';
import { Injectable } from '@nestjs/common';
import { MetricsService } from '../metrics/metrics.service';
import { SalesService } from '../sales/sales.service';
import { AuditService, type AuditView } from './audit.service';

/** The sale's hand-off: the backlog between a reservation and its MySQL row. */
export interface HandoffDepth {
  /** Reservations in the sale's hand-off stream (not written yet). */
  unwritten: number;
  /** Of those, the ones a worker has claimed and not committed yet. */
  beingWritten: number;
  /** The sale's `write-orders` jobs that gave up (the hand-off sweep wakes a new one). */
  failedJobs: number;
}

/** One sample for the admin console's live dashboard; the console derives purchases/s from `purchases`. */
export interface SaleDashboardView {
  sale: Sale;
  audit: AuditView;
  handoff: HandoffDepth;
  /** Successful purchases so far, whatever became of their orders (every order, QUEUED included). */
  purchases: number;
  sampledAt: string;
  /**
   * Orders written per second over the last HISTORY_SECONDS (by the buyer's moment, oldest first,
   * seconds without orders left out), so a console opened or reloaded mid-sale draws the chart so far.
   */
  history: { at: string; purchases: number }[];
  funnel: SaleFunnel;
  /**
   * The reservation script's latency as this API process timed it lately, for a Redis-backed sale only.
   * A reading of the moment, as are `handoff` and the audit's drift: the console draws their series from
   * successive samples.
   */
  reservationLatency?: ReservationLatency;
}

const HISTORY_SECONDS = 120;

/**
 * What a presenter watches during a sale, in one request: the sale, its audit and its hand-off.
 * It recomputes the audit each time (it reads every order of the sale), which is fine for a dashboard
 * polled every second or two at reference scale; a million-order sale would want counters instead.
 */
@Injectable()
export class SaleDashboardService {
  constructor(
    private readonly sales: SalesService,
    private readonly audit: AuditService,
    private readonly handoff: HandoffStream,
    private readonly orders: OrdersQueue,
    private readonly replicaReads: ReplicaReads,
    private readonly roomPlaces: RoomPlaceRepository,
    private readonly metrics: MetricsService,
  ) {}

  async sample(saleId: string): Promise<SaleDashboardView> {
    const sale = await this.sales.get(saleId); // 404 SALE_NOT_FOUND before anything else is read
    const [audit, handoff, failedJobs, history, roomBuyers, reservationLatency] = await Promise.all([
      this.audit.audit(sale.id),
      this.handoff.depth(sale),
      this.orders.failedWriterJobs(sale.id),
      this.history(sale.id),
      sale.waitingRoom ? this.roomPlaces.buyerCounts(sale.id) : undefined,
      sellsFromRedis(sale.strategy) ? this.metrics.reservationLatency() : undefined,
    ]);
    const purchases = Object.values(audit.ordersByStatus).reduce((sum, count) => sum + count, 0);
    return {
      sale,
      audit,
      handoff: { ...handoff, failedJobs },
      purchases,
      sampledAt: new Date().toISOString(),
      history,
      funnel: { ...roomBuyers, ...ordersFunnel(purchases, audit.ordersByStatus) },
      ...(reservationLatency && { reservationLatency }),
    };
  }

  /**
   * From the MySQL replica where there is one: a chart may be a moment behind. The audit is not: it
   * weighs MySQL's rows against Redis's reservations, and a lagging copy would show orders as lost.
   */
  private async history(saleId: string): Promise<SaleDashboardView['history']> {
    const orders = await this.replicaReads.laggingOrders();
    const seconds = await orders.purchasesPerSecond(saleId, new Date(Date.now() - HISTORY_SECONDS * 1000));
    return seconds.map(({ at, purchases }) => ({ at: at.toISOString(), purchases }));
  }
}

/** The funnel's order steps: QUEUED (not written yet) and FAILED (refused by MySQL) count as reserved only. */
function ordersFunnel(purchases: number, orders: OrdersByStatus): Omit<SaleFunnel, 'joined' | 'admitted'> {
  return {
    reserved: purchases,
    written: orders.PENDING_PAYMENT + orders.PAID + orders.CANCELLED + orders.EXPIRED,
    paid: orders.PAID,
  };
}
