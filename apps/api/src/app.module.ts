import { type AppConfig, AppConfigModule } from '@flash-sale/config';
import { DbModule } from '@flash-sale/db';
import { StockModule } from '@flash-sale/stock';
import { QueueModule } from '@flash-sale/queue';
import { RedisModule, REQUEST_COMMAND_RETRIES } from '@flash-sale/redis';
import { type DynamicModule, Module } from '@nestjs/common';
import { AuditModule } from './audit/audit.module';
import { AuthModule } from './auth/auth.module';
import { DemoModule } from './demo/demo.module';
import { MetricsModule } from './metrics/metrics.module';
import { OpsModule } from './ops/ops.module';
import { OrdersModule } from './orders/orders.module';
import { PaymentsModule } from './payments/payments.module';
import { PurchaseModule } from './purchase/purchase.module';
import { SalesModule } from './sales/sales.module';
import { WaitingRoomModule } from './waiting-room/waiting-room.module';

/** The API: the infrastructure libraries' modules, wired once from the config, and one module per feature. */
@Module({})
export class AppModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        AppConfigModule.forRoot(config),
        // A request fails after a couple of reconnect attempts, or a command unanswered for
        // REDIS_COMMAND_TIMEOUT_MS (→ 503), rather than wait for Redis, and a purchase cut off by a
        // disconnect is never sent again to a Redis not yet verified. The purchases handled at once
        // share their writes to Redis (auto-pipelining).
        RedisModule.forRoot({
          ...config.redis,
          maxRetriesPerRequest: REQUEST_COMMAND_RETRIES,
          resendUnansweredCommands: false,
          autoPipelining: true,
        }),
        QueueModule.forRoot({
          redis: config.redis,
          prefix: config.queue.prefix,
          role: 'producer',
          writeOrdersAttempts: config.worker.jobAttempts,
        }),
        DbModule.forRoot({
          url: config.database.url,
          replicaUrl: config.database.replicaUrl,
          poolSize: 20,
          optimisticLockRetries: config.worker.optimisticLockRetries,
        }),
        StockModule.forRoot({ leasePolicy: { leaseSize: config.leases.size, lowWater: config.leases.lowWater } }),
        OpsModule,
        MetricsModule,
        AuthModule,
        SalesModule,
        PurchaseModule,
        WaitingRoomModule,
        OrdersModule,
        PaymentsModule,
        AuditModule,
        DemoModule,
      ],
    };
  }
}
