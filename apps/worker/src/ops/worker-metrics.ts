import type { HandedOffOrder } from '@flash-sale/domain';
import { Injectable } from '@nestjs/common';
import { collectDefaultMetrics, Histogram, Registry } from 'prom-client';

/**
 * The worker's Prometheus registry, served by WorkerMetricsServer. Its own registry (not prom-client's
 * global one) so that several workers in one process (the tests) never register a series twice.
 */
@Injectable()
export class WorkerMetrics {
  readonly registry = new Registry();

  private readonly orderCreation = new Histogram({
    name: 'flash_sale_order_creation_seconds',
    help: 'From the reservation in Redis (reservedAt) to the commit of its order row in MySQL',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  /** After a group commit: the orders that commit created (not the duplicates, not the refused). */
  observeCreated(orders: readonly HandedOffOrder[]): void {
    const now = Date.now();
    for (const order of orders) this.orderCreation.observe(Math.max(0, now - order.reservedAt.getTime()) / 1000);
  }
}
