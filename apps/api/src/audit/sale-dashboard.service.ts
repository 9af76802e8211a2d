import { QueueName } from '@flash-sale/queue';
import { InjectQueue } from '@nestjs/bullmq';
import { Injectable } from '@nestjs/common';
import type { Queue } from 'bullmq';
import type { SaleView } from '../sales/sale.dto';
import { SalesService } from '../sales/sales.service';
import { AuditService, type AuditView } from './audit.service';

/** Jobs of the order queue by state: the backlog between a reservation and its MySQL row. */
export interface QueueDepth {
  waiting: number;
  active: number;
  delayed: number;
  failed: number;
}

/** One sample for the admin console's live dashboard; the console derives purchases/s from `purchases`. */
export interface SaleDashboardView {
  sale: SaleView;
  audit: AuditView;
  queue: QueueDepth;
  /** Successful purchases so far, whatever became of their orders (every order, QUEUED included). */
  purchases: number;
  sampledAt: string;
}

/**
 * What a presenter watches during a sale, in one request: the sale, its audit and the order queue.
 * It recomputes the audit each time (it reads every order of the sale), which is fine for a dashboard
 * polled every second or two at reference scale; a million-order sale would want counters instead.
 */
@Injectable()
export class SaleDashboardService {
  constructor(
    private readonly sales: SalesService,
    private readonly audit: AuditService,
    @InjectQueue(QueueName.Orders) private readonly orders: Queue,
  ) {}

  async sample(saleId: string): Promise<SaleDashboardView> {
    const sale = await this.sales.get(saleId); // 404 SALE_NOT_FOUND before anything else is read
    const [audit, counts] = await Promise.all([
      this.audit.audit(sale.id),
      this.orders.getJobCounts('waiting', 'prioritized', 'active', 'delayed', 'failed'),
    ]);
    const purchases = Object.values(audit.ordersByStatus).reduce((sum, count) => sum + count, 0);
    return {
      sale,
      audit,
      queue: {
        waiting: (counts['waiting'] ?? 0) + (counts['prioritized'] ?? 0),
        active: counts['active'] ?? 0,
        delayed: counts['delayed'] ?? 0,
        failed: counts['failed'] ?? 0,
      },
      purchases,
      sampledAt: new Date().toISOString(),
    };
  }
}
