import { AppConfigModule, type AppConfig } from '@flash-sale/config';
import { DbModule } from '@flash-sale/db';
import { LifecycleQueue, OrdersQueue, QueueModule } from '@flash-sale/queue';
import { RedisModule } from '@flash-sale/redis';
import { type DynamicModule, Module } from '@nestjs/common';
import { LifecycleProcessor } from './lifecycle/lifecycle.processor';
import { OrderExpiry } from './lifecycle/order-expiry';
import { HandoffSweep } from './lifecycle/handoff-sweep';
import { SaleRetention } from './lifecycle/sale-retention';
import { StockReconciliation } from './lifecycle/stock-reconciliation';
import { HandoffDrain } from './orders/handoff-drain';
import { OrderWriter } from './orders/order-writer';
import { WriteOrdersProcessor } from './orders/write-orders.processor';
import { WorkerOpsModule } from './ops/worker-ops.module';
import { LIFECYCLE_CONFIG, LIFECYCLE_QUEUE, ORDERS_QUEUE, QUEUE_PREFIX, WORKER_CONFIG } from './worker.tokens';

@Module({})
export class WorkerModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: WorkerModule,
      imports: [
        AppConfigModule.forRoot(config),
        RedisModule.forRoot({ ...config.redis }),
        QueueModule.forRoot({
          redis: config.redis,
          prefix: config.queue.prefix,
          role: 'consumer',
          writeOrdersAttempts: config.worker.jobAttempts,
        }),
        DbModule.forRoot({
          url: config.database.url,
          poolSize: 8,
          optimisticLockRetries: config.worker.optimisticLockRetries,
          leasePolicy: { leaseSize: config.leases.size, lowWater: config.leases.lowWater },
        }),
        WorkerOpsModule.forRoot(config),
      ],
      providers: [
        { provide: WORKER_CONFIG, useValue: config.worker },
        { provide: LIFECYCLE_CONFIG, useValue: config.lifecycle },
        { provide: QUEUE_PREFIX, useValue: config.queue.prefix },
        { provide: ORDERS_QUEUE, inject: [OrdersQueue], useFactory: (orders: OrdersQueue) => orders.queue },
        {
          provide: LIFECYCLE_QUEUE,
          inject: [LifecycleQueue],
          useFactory: (lifecycle: LifecycleQueue) => lifecycle.queue,
        },
        OrderWriter,
        HandoffDrain,
        WriteOrdersProcessor,
        OrderExpiry,
        HandoffSweep,
        SaleRetention,
        StockReconciliation,
        LifecycleProcessor,
      ],
    };
  }
}
