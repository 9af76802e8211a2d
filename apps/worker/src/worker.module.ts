import { AppConfigModule, type AppConfig } from '@flash-sale/config';
import { DbModule } from '@flash-sale/db';
import { StockModule } from '@flash-sale/stock';
import { QueueModule } from '@flash-sale/queue';
import { RedisModule } from '@flash-sale/redis';
import { type DynamicModule, Module } from '@nestjs/common';
import { LifecycleModule } from './lifecycle/lifecycle.module';
import { WorkerOpsModule } from './ops/worker-ops.module';
import { OrdersModule } from './orders/orders.module';

/** The worker: the library modules over the validated config, and one module per feature. */
@Module({})
export class WorkerModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: WorkerModule,
      imports: [
        AppConfigModule.forRoot(config),
        // No command deadline: nobody waits on the worker's answer, and its work resumes when a cut link heals.
        RedisModule.forRoot({ ...config.redis, commandTimeoutMs: undefined }),
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
        }),
        StockModule.forRoot({ leasePolicy: { leaseSize: config.leases.size, lowWater: config.leases.lowWater } }),
        WorkerOpsModule,
        OrdersModule,
        LifecycleModule,
      ],
    };
  }
}
