import type { AppConfig } from '@flash-sale/config';
import {
  dataSourceOptions,
  ENTITIES,
  OrderLifecycle,
  SaleBooksRepository,
  SaleStockRepository,
  StockLeaseRepository,
  StockLeases,
} from '@flash-sale/db';
import { QueueName } from '@flash-sale/queue';
import {
  createRedisClient,
  reportOutagesOnce,
  HandoffStream,
  KeyBuilder,
  type RedisClient,
  ReservationScripts,
  SaleActivity,
  SaleRedisRepository,
} from '@flash-sale/redis';
import {
  type DynamicModule,
  Inject,
  Logger,
  Module,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import { getDataSourceToken, TypeOrmModule } from '@nestjs/typeorm';
import { Queue } from 'bullmq';
import type { DataSource } from 'typeorm';
import { LifecycleProcessor } from './lifecycle/lifecycle.processor';
import { OrderExpiry } from './lifecycle/order-expiry';
import { HandoffSweep } from './lifecycle/handoff-sweep';
import { SaleRetention } from './lifecycle/sale-retention';
import { StockReconciliation } from './lifecycle/stock-reconciliation';
import { HandoffDrain } from './orders/handoff-drain';
import { OrderWriter } from './orders/order-writer';
import { WriteOrdersProcessor } from './orders/write-orders.processor';
import { WorkerOpsModule } from './ops/worker-ops.module';
import {
  BULL_CONNECTION,
  LIFECYCLE_CONFIG,
  LIFECYCLE_QUEUE,
  ORDERS_QUEUE,
  QUEUE_PREFIX,
  REDIS_CLIENT,
  WORKER_CONFIG,
} from './worker.tokens';

@Module({})
export class WorkerModule implements OnModuleInit, OnApplicationShutdown {
  constructor(
    @Inject(REDIS_CLIENT) private readonly redis: RedisClient,
    @Inject(BULL_CONNECTION) private readonly bullConnection: RedisClient,
    @Inject(LIFECYCLE_QUEUE) private readonly lifecycleQueue: Queue,
    @Inject(ORDERS_QUEUE) private readonly ordersQueue: Queue,
  ) {}

  onModuleInit(): void {
    const logger = new Logger(WorkerModule.name);
    reportOutagesOnce([this.redis, this.bullConnection], [this.lifecycleQueue, this.ordersQueue], (message) =>
      logger.warn(message),
    );
  }

  static forRoot(config: AppConfig): DynamicModule {
    const queue = (name: QueueName) => ({
      provide: name === QueueName.Orders ? ORDERS_QUEUE : LIFECYCLE_QUEUE,
      inject: [BULL_CONNECTION],
      useFactory: (connection: RedisClient) => new Queue(name, { connection, prefix: config.queue.prefix }),
    });
    return {
      module: WorkerModule,
      imports: [
        TypeOrmModule.forRoot(dataSourceOptions({ url: config.database.url, poolSize: 8 })),
        TypeOrmModule.forFeature(ENTITIES),
        WorkerOpsModule.forRoot(config),
      ],
      providers: [
        { provide: WORKER_CONFIG, useValue: config.worker },
        { provide: LIFECYCLE_CONFIG, useValue: config.lifecycle },
        { provide: QUEUE_PREFIX, useValue: config.queue.prefix },
        { provide: REDIS_CLIENT, useFactory: () => createRedisClient(config.redis) },
        {
          provide: BULL_CONNECTION,
          useFactory: () => createRedisClient(config.redis, { maxRetriesPerRequest: null }),
        },
        queue(QueueName.Orders),
        queue(QueueName.OrderLifecycle),
        { provide: KeyBuilder, useValue: new KeyBuilder(config.redis.keyPrefix) },
        {
          provide: ReservationScripts,
          inject: [REDIS_CLIENT, KeyBuilder],
          useFactory: (redis: RedisClient, keys: KeyBuilder) => new ReservationScripts(redis, keys),
        },
        {
          provide: SaleRedisRepository,
          inject: [REDIS_CLIENT, KeyBuilder],
          useFactory: (redis: RedisClient, keys: KeyBuilder) => new SaleRedisRepository(redis, keys),
        },
        {
          provide: HandoffStream,
          inject: [REDIS_CLIENT, KeyBuilder],
          useFactory: (redis: RedisClient, keys: KeyBuilder) => new HandoffStream(redis, keys),
        },
        {
          provide: SaleActivity,
          inject: [REDIS_CLIENT, KeyBuilder],
          useFactory: (redis: RedisClient, keys: KeyBuilder) => new SaleActivity(redis, keys),
        },
        { provide: SaleStockRepository, useValue: new SaleStockRepository() },
        {
          provide: StockLeaseRepository,
          inject: [getDataSourceToken()],
          useFactory: (dataSource: DataSource) => new StockLeaseRepository(dataSource),
        },
        {
          provide: StockLeases,
          inject: [StockLeaseRepository, ReservationScripts, SaleRedisRepository, SaleActivity],
          useFactory: (
            repository: StockLeaseRepository,
            scripts: ReservationScripts,
            saleRedis: SaleRedisRepository,
            activity: SaleActivity,
          ) =>
            new StockLeases(
              repository,
              scripts,
              saleRedis,
              { leaseSize: config.leases.size, lowWater: config.leases.lowWater },
              activity,
            ),
        },
        {
          provide: SaleBooksRepository,
          inject: [getDataSourceToken()],
          useFactory: (dataSource: DataSource) => new SaleBooksRepository(dataSource),
        },
        {
          provide: OrderLifecycle,
          inject: [getDataSourceToken(), SaleStockRepository, SaleActivity],
          useFactory: (dataSource: DataSource, stock: SaleStockRepository, activity: SaleActivity) =>
            new OrderLifecycle(dataSource, stock, config.worker.optimisticLockRetries, activity),
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

  /** Runs after every provider's own hooks (the BullMQ workers close in onModuleDestroy). */
  async onApplicationShutdown(): Promise<void> {
    await Promise.all([this.lifecycleQueue.close(), this.ordersQueue.close()]);
    await Promise.all([this.redis.quit(), this.bullConnection.quit()]);
  }
}
