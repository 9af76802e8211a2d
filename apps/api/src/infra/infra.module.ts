import { type AppConfig, loadConfig } from '@flash-sale/config';
import {
  dataSourceOptions,
  ENTITIES,
  OrderLifecycle,
  SaleBooksRepository,
  SaleStockRepository,
  StockLeaseRepository,
  StockLeases,
  StrategyPurchaseRepository,
} from '@flash-sale/db';
import { DataSource } from 'typeorm';
import { QueueName } from '@flash-sale/queue';
import {
  createRedisClient,
  reportOutagesOnce,
  KeyBuilder,
  type RedisClient,
  ReservationScripts,
  SaleActivity,
  SaleRedisRepository,
  StockReturnSubscription,
} from '@flash-sale/redis';
import { BullModule, InjectQueue } from '@nestjs/bullmq';
import {
  type DynamicModule,
  Global,
  Inject,
  Logger,
  Module,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import type { Queue } from 'bullmq';
import { TypeOrmModule } from '@nestjs/typeorm';
import { APP_CONFIG, BULL_CONNECTION, REDIS_CLIENT } from './tokens';

/**
 * Redis, MySQL and the queue, wired once for the whole API. Services never build a client: they
 * inject these adapters, so tests can boot the real module against their own database and prefixes.
 */
@Global()
@Module({})
export class InfraModule implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(InfraModule.name);

  constructor(
    @Inject(REDIS_CLIENT) private readonly redis: RedisClient,
    @Inject(BULL_CONNECTION) private readonly bullConnection: RedisClient,
    @InjectQueue(QueueName.Orders) private readonly ordersQueue: Queue,
    @InjectQueue(QueueName.OrderLifecycle) private readonly lifecycleQueue: Queue,
  ) {}

  onModuleInit(): void {
    reportOutagesOnce([this.redis, this.bullConnection], [this.ordersQueue, this.lifecycleQueue], (message) =>
      this.logger.warn(message),
    );
  }

  static forRoot(config: AppConfig = loadConfig()): DynamicModule {
    // BullMQ never closes a connection it was handed; this module does, at shutdown.
    // The API only adds jobs: fail a request after a couple of reconnect attempts (→ 503) rather than
    // hold it open while Redis is down. (Workers, which block, need `null` here; the API has none.)
    const bullConnection = createRedisClient(config.redis, { maxRetriesPerRequest: 2 });
    return {
      module: InfraModule,
      imports: [
        TypeOrmModule.forRoot({ ...dataSourceOptions({ url: config.database.url, poolSize: 20 }) }),
        TypeOrmModule.forFeature(ENTITIES),
        BullModule.forRoot({ prefix: config.queue.prefix, connection: bullConnection }),
        BullModule.registerQueue({ name: QueueName.Orders }, { name: QueueName.OrderLifecycle }),
      ],
      providers: [
        { provide: APP_CONFIG, useValue: config },
        { provide: REDIS_CLIENT, useFactory: () => createRedisClient(config.redis, { maxRetriesPerRequest: 2 }) },
        { provide: BULL_CONNECTION, useValue: bullConnection },
        { provide: KeyBuilder, useValue: new KeyBuilder(config.redis.keyPrefix) },
        {
          provide: ReservationScripts,
          inject: [REDIS_CLIENT, KeyBuilder],
          useFactory: (redis: RedisClient, keys: KeyBuilder) => new ReservationScripts(redis, keys),
        },
        { provide: SaleStockRepository, useValue: new SaleStockRepository() },
        {
          provide: StockLeaseRepository,
          inject: [DataSource],
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
          provide: OrderLifecycle,
          inject: [DataSource, SaleStockRepository, SaleActivity],
          useFactory: (dataSource: DataSource, stock: SaleStockRepository, activity: SaleActivity) =>
            new OrderLifecycle(dataSource, stock, config.worker.optimisticLockRetries, activity),
        },
        {
          provide: StrategyPurchaseRepository,
          inject: [DataSource],
          useFactory: (dataSource: DataSource) => new StrategyPurchaseRepository(dataSource),
        },
        {
          provide: SaleBooksRepository,
          inject: [DataSource],
          useFactory: (dataSource: DataSource) => new SaleBooksRepository(dataSource),
        },
        {
          provide: SaleRedisRepository,
          inject: [REDIS_CLIENT, KeyBuilder],
          useFactory: (redis: RedisClient, keys: KeyBuilder) => new SaleRedisRepository(redis, keys),
        },
        {
          provide: StockReturnSubscription,
          inject: [REDIS_CLIENT, KeyBuilder],
          useFactory: (redis: RedisClient, keys: KeyBuilder) => new StockReturnSubscription(redis, keys),
        },
        {
          provide: SaleActivity,
          inject: [REDIS_CLIENT, KeyBuilder],
          useFactory: (redis: RedisClient, keys: KeyBuilder) => new SaleActivity(redis, keys),
        },
      ],
      exports: [
        APP_CONFIG,
        REDIS_CLIENT,
        KeyBuilder,
        ReservationScripts,
        SaleRedisRepository,
        SaleActivity,
        StockReturnSubscription,
        SaleBooksRepository,
        OrderLifecycle,
        SaleStockRepository,
        StockLeaseRepository,
        StockLeases,
        StrategyPurchaseRepository,
        TypeOrmModule,
        BullModule,
      ],
    };
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all([this.redis.quit(), this.bullConnection.quit()]);
  }
}
