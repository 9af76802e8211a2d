import { Module } from '@nestjs/common';
import { HandoffSweep } from './handoff-sweep';
import { LifecycleProcessor } from './lifecycle.processor';
import { OrderExpiry } from './order-expiry';
import { SaleRetention } from './sale-retention';
import { StockReconciliation } from './stock-reconciliation';

/**
 * The `order-lifecycle` queue's scheduled maintenance: the expiry sweep, the hand-off sweep,
 * reconciliation of Redis against MySQL and the retention of ended sales.
 */
@Module({
  providers: [OrderExpiry, HandoffSweep, SaleRetention, StockReconciliation, LifecycleProcessor],
})
export class LifecycleModule {}
