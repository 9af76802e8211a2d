import { type DynamicModule, Global, Module, type Provider, type Type } from '@nestjs/common';
import { getDataSourceToken, TypeOrmModule } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { dataSourceOptions } from './data-source';
import { DatabaseHealth } from './database-health';
import { DemoRunRepository } from './demo-run.repository';
import { OrderExpiryRepository } from './order-expiry.repository';
import { OrderQueryRepository } from './order-query.repository';
import { OrderTransitionRepository } from './order-transition.repository';
import { PaymentRepository } from './payment.repository';
import { ReplicaReads } from './replica-reads';
import { OrderWritingRepository } from './order-writing.repository';
import { SaleBooksRepository } from './sale-books.repository';
import { RoomPlaceRepository } from './room-place.repository';
import { SaleBuyerRepository } from './sale-buyer.repository';
import { SaleLayouts } from './sale-layouts';
import { SaleRepository } from './sale.repository';
import { SaleStockRepository } from './sale-stock.repository';
import { SaleWindowRepository } from './sale-window.repository';
import { StockLeaseRepository } from './stock-lease.repository';
import { StrategyPurchaseRepository } from './strategy-purchase.repository';
import { UserRepository } from './user.repository';
import { WarmUpSaleRepository } from './warm-up-sale.repository';

export interface DbModuleOptions {
  url: string;
  /** A replica of `url`'s server, for the reads ReplicaReads may send there; none: the primary serves them. */
  replicaUrl?: string;
  /** Connections in the pool: the worker's group commit needs few, the API's reads a few more. */
  poolSize: number;
  /** Attempts of a write that lost the optimistic lock on the sale's row. */
  optimisticLockRetries: number;
}

/** The TypeORM connection name of the read replica. */
const REPLICA_CONNECTION = 'replica';

/** The repositories that take only the DataSource. */
const DATA_SOURCE_REPOSITORIES: (new (dataSource: DataSource) => object)[] = [
  StockLeaseRepository,
  SaleBooksRepository,
  SaleRepository,
  OrderQueryRepository,
  UserRepository,
  DemoRunRepository,
  OrderExpiryRepository,
  SaleBuyerRepository,
  RoomPlaceRepository,
  SaleLayouts,
  SaleWindowRepository,
  WarmUpSaleRepository,
  DatabaseHealth,
];

/**
 * MySQL for a whole app: the TypeORM connection and the repositories over it. Apps reach MySQL only
 * through these classes (raw SQL lives in this library); the lint rule in eslint.config.mjs enforces it.
 * What spans MySQL and Redis (the lease protocol, the order lifecycle, payments) is StockModule's, in
 * libs/stock: this library knows nothing of Redis.
 */
@Global()
@Module({})
export class DbModule {
  static forRoot(options: DbModuleOptions): DynamicModule {
    const dataSource = getDataSourceToken();
    const repositories: Provider[] = [
      ...DATA_SOURCE_REPOSITORIES.map((repository) => ({
        provide: repository,
        inject: [dataSource],
        useFactory: (source: DataSource) => new repository(source),
      })),
      { provide: SaleStockRepository, useValue: new SaleStockRepository() },
      // The writers that take units off the sale's row, through the one SaleStockRepository.
      ...[OrderWritingRepository, StrategyPurchaseRepository].map((repository) => ({
        provide: repository,
        inject: [dataSource, SaleStockRepository],
        useFactory: (source: DataSource, stock: SaleStockRepository) => new repository(source, stock),
      })),
      {
        provide: OrderTransitionRepository,
        inject: [dataSource, SaleStockRepository],
        useFactory: (source: DataSource, stock: SaleStockRepository) =>
          new OrderTransitionRepository(source, stock, options.optimisticLockRetries),
      },
      {
        provide: PaymentRepository,
        inject: [dataSource, OrderTransitionRepository],
        useFactory: (source: DataSource, transitions: OrderTransitionRepository) =>
          new PaymentRepository(source, transitions),
      },
    ];
    const replica = getDataSourceToken(REPLICA_CONNECTION);
    repositories.push({
      provide: ReplicaReads,
      inject: options.replicaUrl ? [dataSource, replica] : [dataSource],
      useFactory: (primary: DataSource, replicaSource?: DataSource) => new ReplicaReads(primary, replicaSource),
    });
    return {
      module: DbModule,
      imports: [
        TypeOrmModule.forRoot(dataSourceOptions({ url: options.url, poolSize: options.poolSize })),
        ...(options.replicaUrl
          ? [
              TypeOrmModule.forRoot({
                ...dataSourceOptions({ url: options.replicaUrl, poolSize: options.poolSize }),
                // Reads only; the primary's schema reaches it by replication.
                name: REPLICA_CONNECTION,
              }),
            ]
          : []),
      ],
      providers: repositories,
      exports: repositories.map((provider) => (provider as { provide: unknown }).provide as Type<unknown>),
    };
  }
}
