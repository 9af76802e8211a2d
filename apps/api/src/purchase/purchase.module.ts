import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { DurabilityModule } from '../durability/durability.module';
import { MetricsModule } from '../metrics/metrics.module';
import { ProtectionModule } from '../protection/protection.module';
import { SalesModule } from '../sales/sales.module';
import { WaitingRoomModule } from '../waiting-room/waiting-room.module';
import { PurchaseRoute } from './purchase.route';
import { PurchaseService } from './purchase.service';
import { STOCK_STRATEGY_PROVIDERS, StockStrategies } from './strategies/stock-strategies';
import { SubmitTokens } from './submit-tokens';
import { SubmitTokensController } from './submit-tokens.controller';
import { TokenOrders } from './token-orders';

/**
 * The purchase path: submit tokens, the purchase route, and the strategies a sale sells by (one folder
 * each under strategies/).
 */
@Module({
  imports: [AuthModule, DurabilityModule, MetricsModule, ProtectionModule, SalesModule, WaitingRoomModule],
  controllers: [SubmitTokensController],
  providers: [PurchaseRoute, PurchaseService, SubmitTokens, TokenOrders, ...STOCK_STRATEGY_PROVIDERS],
  // The demonstration asks a sale's strategy for its paused lock holder (demo/demo-runs.service.ts,
  // demo/lock-holder-pause.controller.ts).
  exports: [StockStrategies],
})
export class PurchaseModule {}
