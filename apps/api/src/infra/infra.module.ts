import { type AppConfig, AppConfigModule } from '@flash-sale/config';
import { DbModule, ENTITIES } from '@flash-sale/db';
import { QueueModule } from '@flash-sale/queue';
import { RedisModule } from '@flash-sale/redis';
import { type DynamicModule, Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';

/** Redis, MySQL and the queue, wired once for the whole API. */
@Global()
@Module({})
export class InfraModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: InfraModule,
      imports: [
        AppConfigModule.forRoot(config),
        // The API fails a request after a couple of reconnect attempts (→ 503) rather than hold it open.
        RedisModule.forRoot({ ...config.redis, maxRetriesPerRequest: 2 }),
        QueueModule.forRoot({
          redis: config.redis,
          prefix: config.queue.prefix,
          role: 'producer',
          writeOrdersAttempts: config.worker.jobAttempts,
        }),
        DbModule.forRoot({
          url: config.database.url,
          poolSize: 20,
          optimisticLockRetries: config.worker.optimisticLockRetries,
          leasePolicy: { leaseSize: config.leases.size, lowWater: config.leases.lowWater },
        }),
        TypeOrmModule.forFeature(ENTITIES),
      ],
      exports: [TypeOrmModule],
    };
  }
}
