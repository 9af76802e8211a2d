import { LifecycleQueue, OrdersQueue } from '@flash-sale/queue';
import type { ModuleRef } from '@nestjs/core';
import type { Queue } from 'bullmq';

/** The product's queues, for metrics, readiness and the dashboard. */
export function registeredQueues(moduleRef: ModuleRef): Queue[] {
  return [moduleRef.get(OrdersQueue, { strict: false }).queue, moduleRef.get(LifecycleQueue, { strict: false }).queue];
}
