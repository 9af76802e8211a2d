import type { SaleStrategy } from '@flash-sale/domain';
import { Injectable, type OnModuleInit, type Provider } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { EarlyAnswer, StockStrategy, StockStrategyPlugin } from '../stock-strategy';
import { dbBatched } from './db-batched/db-batched.strategy';
import { dbOptimistic } from './db-optimistic/db-optimistic.strategy';
import { dbPessimistic } from './db-pessimistic/db-pessimistic.strategy';
import { dbSegmented } from './db-segmented/db-segmented.strategy';
import { MySqlPurchases } from './mysql/mysql-purchases';
import { naiveUnsafe } from './naive-unsafe/naive-unsafe.strategy';
import { redisLockUnfenced } from './redis-lock-unfenced/redis-lock-unfenced.strategy';
import { redisLock } from './redis-lock/redis-lock.strategy';
import { redisLua } from './redis-lua/redis-lua.strategy';

/**
 * Every strategy of the contract's table (SALE_STRATEGIES) and its implementation: a strategy listed there
 * without one here, or one here that is not listed, does not compile. Adding a strategy is a folder
 * beside these, its entry in the contract's table, and its line here (docs/architecture.md "Strategies").
 */
const PLUGINS = {
  'redis-lua': redisLua,
  'db-optimistic': dbOptimistic,
  'db-segmented': dbSegmented,
  'db-pessimistic': dbPessimistic,
  'db-batched': dbBatched,
  'redis-lock': redisLock,
  'redis-lock-unfenced': redisLockUnfenced,
  'naive-unsafe': naiveUnsafe,
} as const satisfies Record<SaleStrategy, StockStrategyPlugin>;

/** The sale's strategy, by its name; and what the strategies add to the shared path. */
@Injectable()
export class StockStrategies implements OnModuleInit {
  private readonly byName = new Map<SaleStrategy, StockStrategy>();

  constructor(private readonly moduleRef: ModuleRef) {}

  onModuleInit(): void {
    if (this.byName.size === 0) this.resolve();
  }

  of(strategy: SaleStrategy): StockStrategy {
    return this.byName.get(strategy)!;
  }

  /** Every strategy's early answer, in the contract's order (asked by the route before the sale is read). */
  earlyAnswers(): EarlyAnswer[] {
    if (this.byName.size === 0) this.resolve();
    return [...this.byName.values()].flatMap((strategy) => (strategy.earlyAnswer ? [strategy.earlyAnswer] : []));
  }

  /** Fills the registry: on the first ask, which may be another provider's onModuleInit. */
  private resolve(): void {
    for (const [name, plugin] of Object.entries(PLUGINS) as [SaleStrategy, StockStrategyPlugin][]) {
      this.byName.set(name, this.moduleRef.get(plugin.implementation));
    }
  }
}

/** The purchase module's providers for every strategy: the registry, the shared MySQL steps, each plug-in's own. */
export const STOCK_STRATEGY_PROVIDERS: Provider[] = [
  StockStrategies,
  MySqlPurchases,
  ...new Set(
    Object.values(PLUGINS).flatMap((plugin: StockStrategyPlugin) => [
      plugin.implementation,
      ...(plugin.providers ?? []),
    ]),
  ),
];
