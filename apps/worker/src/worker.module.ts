import type { AppConfig } from '@flash-sale/config';
import { dataSourceOptions, ENTITIES } from '@flash-sale/db';
import { QueueName } from '@flash-sale/queue';
import { createRedisClient, KeyBuilder, type RedisClient, ReservationScripts } from '@flash-sale/redis';
import { BullModule } from '@nestjs/bullmq';
import { type DynamicModule, Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CreateOrderProcessor } from './orders/create-order.processor';
import { OrderBatcher } from './orders/order-batcher';
import { OrderWriter } from './orders/order-writer';
import { SaleStockRepository } from './orders/sale-stock.repository';
import { WORKER_CONFIG } from './worker.tokens';

const REDIS_CLIENT = Symbol('REDIS_CLIENT');
const BULL_CONNECTION = Symbol('BULL_CONNECTION');

@Module({})
export class WorkerModule implements OnApplicationShutdown {
  constructor(
    @Inject(REDIS_CLIENT) private readonly redis: RedisClient,
    @Inject(BULL_CONNECTION) private readonly bullConnection: RedisClient,
  ) {}

  static forRoot(config: AppConfig): DynamicModule {
    // BullMQ never closes a connection it was handed; this module does, at shutdown.
    const bullConnection = createRedisClient(config.redis, { maxRetriesPerRequest: null });
    return {
      module: WorkerModule,
      imports: [
        TypeOrmModule.forRoot(dataSourceOptions({ url: config.database.url, poolSize: 8 })),
        TypeOrmModule.forFeature(ENTITIES),
        BullModule.forRoot({ prefix: config.queue.prefix, connection: bullConnection }),
        BullModule.registerQueue({ name: QueueName.Orders }),
      ],
      providers: [
        { provide: WORKER_CONFIG, useValue: config.worker },
        { provide: REDIS_CLIENT, useFactory: () => createRedisClient(config.redis) },
        { provide: BULL_CONNECTION, useValue: bullConnection },
        {
          provide: ReservationScripts,
          inject: [REDIS_CLIENT],
          useFactory: (redis: RedisClient) => new ReservationScripts(redis, new KeyBuilder(config.redis.keyPrefix)),
        },
        SaleStockRepository,
        OrderWriter,
        OrderBatcher,
        CreateOrderProcessor,
      ],
      exports: [OrderWriter, SaleStockRepository, OrderBatcher],
    };
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all([this.redis.quit(), this.bullConnection.quit()]);
  }
}
