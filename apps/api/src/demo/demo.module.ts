import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { PurchaseModule } from '../purchase/purchase.module';
import { SalesModule } from '../sales/sales.module';
import { DemoRunsController } from './demo-runs.controller';
import { DemoRunsService } from './demo-runs.service';
import { LockHolderPauseController } from './lock-holder-pause.controller';

/**
 * The oversell demonstration: bursts of buyers at one sale per strategy, through the public API; and
 * its paused lock holder on its own, for a load test's sale.
 */
@Module({
  imports: [AuthModule, PurchaseModule, SalesModule],
  controllers: [DemoRunsController, LockHolderPauseController],
  providers: [DemoRunsService],
})
export class DemoModule {}
