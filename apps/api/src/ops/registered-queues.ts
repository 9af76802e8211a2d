import { QueueName } from '@flash-sale/queue';
import { getQueueToken } from '@nestjs/bullmq';
import type { ModuleRef } from '@nestjs/core';
import type { Queue } from 'bullmq';

/**
 * The product's queues this API has registered (infra/infra.module.ts), for metrics, readiness and the
 * dashboard. Call it once the application is created (from onModuleInit on): before, a queue provider
 * may not be instantiated yet.
 */
export function registeredQueues(moduleRef: ModuleRef): Queue[] {
  return Object.values(QueueName).flatMap((name) => {
    try {
      const queue = moduleRef.get<Queue | null>(getQueueToken(name), { strict: false });
      return queue ? [queue] : [];
    } catch {
      return []; // not produced by the API
    }
  });
}
