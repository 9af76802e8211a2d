import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { PurchaseModule } from '../purchase/purchase.module';
import { DemoRunsController } from './demo-runs.controller';
import { DemoRunsService } from './demo-runs.service';

/** The oversell demonstration: bursts of buyers at one sale per strategy, through the public API. */
@Module({
  imports: [AuthModule, PurchaseModule],
  controllers: [DemoRunsController],
  providers: [DemoRunsService],
})
export class DemoModule {}
