import { OrderTransitionRepository, SaleWindowRepository, StockLeaseRepository } from '@flash-sale/db';
import { HandoffStream, ReservationScripts, SaleActivity, SaleState } from '@flash-sale/redis';
import { type DynamicModule, Global, Module, type Provider, type Type } from '@nestjs/common';
import type { LeasePolicy } from './lease-policy';
import { OrderLifecycle } from './order-lifecycle';
import { StockLeases } from './stock-leases';

export interface StockModuleOptions {
  leasePolicy: LeasePolicy;
}

/**
 * What spans MySQL and Redis, for a whole app: the lease protocol, and the order lifecycle whose every
 * change marks its sale for reconciliation. Callers see no TypeORM type: each of its operations owns its
 * transactions.
 * Needs DbModule and RedisModule.
 */
@Global()
@Module({})
export class StockModule {
  static forRoot(options: StockModuleOptions): DynamicModule {
    const providers: Provider[] = [
      {
        provide: StockLeases,
        inject: [
          StockLeaseRepository,
          ReservationScripts,
          SaleState,
          SaleActivity,
          SaleWindowRepository,
          HandoffStream,
        ],
        useFactory: (
          repository: StockLeaseRepository,
          scripts: ReservationScripts,
          saleRedis: SaleState,
          activity: SaleActivity,
          windows: SaleWindowRepository,
          handoff: HandoffStream,
        ) => new StockLeases(repository, scripts, saleRedis, options.leasePolicy, activity, windows, handoff),
      },
      {
        provide: OrderLifecycle,
        inject: [OrderTransitionRepository, SaleActivity],
        useFactory: (transitions: OrderTransitionRepository, activity: SaleActivity) =>
          new OrderLifecycle(transitions, activity),
      },
    ];
    return {
      module: StockModule,
      providers,
      exports: providers.map((provider) => (provider as { provide: unknown }).provide as Type<unknown>),
    };
  }
}
