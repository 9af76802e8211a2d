import type { AppConfig } from '@flash-sale/config';
import { dataSourceOptions, ENTITIES, SaleStockRepository } from '@flash-sale/db';
import { createRedisClient, KeyBuilder, type RedisClient, ReservationScripts } from '@flash-sale/redis';
import { type DynamicModule, Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CreateOrderProcessor } from './orders/create-order.processor';
import { OrderBatcher } from './orders/order-batcher';
import { OrderWriter } from './orders/order-writer';
import { BULL_CONNECTION, QUEUE_PREFIX, REDIS_CLIENT, WORKER_CONFIG } from './worker.tokens';

@Module({})
export class WorkerModule implements OnApplicationShutdown {
  constructor(
    @Inject(REDIS_CLIENT) private readonly redis: RedisClient,
    @Inject(BULL_CONNECTION) private readonly bullConnection: RedisClient,
  ) {}

  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: WorkerModule,
      imports: [
        TypeOrmModule.forRoot(dataSourceOptions({ url: config.database.url, poolSize: 8 })),
        TypeOrmModule.forFeature(ENTITIES),
      ],
      providers: [
        { provide: WORKER_CONFIG, useValue: config.worker },
        { provide: QUEUE_PREFIX, useValue: config.queue.prefix },
        { provide: REDIS_CLIENT, useFactory: () => createRedisClient(config.redis) },
        {
          provide: BULL_CONNECTION,
          useFactory: () => createRedisClient(config.redis, { maxRetriesPerRequest: null }),
        },
        {
          provide: ReservationScripts,
          inject: [REDIS_CLIENT],
          useFactory: (redis: RedisClient) => new ReservationScripts(redis, new KeyBuilder(config.redis.keyPrefix)),
        },
        { provide: SaleStockRepository, useValue: new SaleStockRepository() },
        OrderWriter,
        OrderBatcher,
        CreateOrderProcessor,
      ],
    };
  }

  /** Runs after every provider's own shutdown hook (the BullMQ worker closes first). */
  async onApplicationShutdown(): Promise<void> {
    await Promise.all([this.redis.quit(), this.bullConnection.quit()]);
  }
}
