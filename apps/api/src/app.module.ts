import type { AppConfig } from '@flash-sale/config';
import { type DynamicModule, Module } from '@nestjs/common';
import { AuditService } from './audit/audit.service';
import { SaleDashboardService } from './audit/sale-dashboard.service';
import { AuthModule } from './auth/auth.module';
import { DemoRunsController } from './demo/demo-runs.controller';
import { DemoRunsService } from './demo/demo-runs.service';
import { InfraModule } from './infra/infra.module';
import { OpsModule } from './ops/ops.module';
import { AdminOrdersController } from './orders/admin-orders.controller';
import { AdminOrdersService } from './orders/admin-orders.service';
import { OrdersController } from './orders/orders.controller';
import { OrdersService } from './orders/orders.service';
import { ProtectionModule } from './protection/protection.module';
import { PaymentsController } from './payments/payments.controller';
import { PaymentsService } from './payments/payments.service';
import { SimulatedPaymentProvider } from './payments/simulated-payment-provider';
import { DbPurchase } from './purchase/db-purchase';
import { PurchaseController } from './purchase/purchase.controller';
import { IncarnationGuard } from './purchase/incarnation-guard';
import { PurchaseRoute } from './purchase/purchase-route';
import { PurchaseService } from './purchase/purchase.service';
import { SoldOutFastPath } from './purchase/sold-out-fast-path';
import { SoldOutGate } from './purchase/sold-out-gate';
import { SubmitTokens } from './purchase/submit-tokens';
import { WriteOrdersNudge } from './purchase/write-orders-nudge';
import { SaleCatalog } from './sales/sale-catalog';
import { AdminSalesController, SalesController } from './sales/sales.controller';
import { SalesService } from './sales/sales.service';

@Module({})
export class AppModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [InfraModule.forRoot(config), AuthModule, OpsModule, ProtectionModule],
      controllers: [
        SalesController,
        AdminSalesController,
        PurchaseController,
        OrdersController,
        PaymentsController,
        AdminOrdersController,
        DemoRunsController,
      ],
      providers: [
        SaleCatalog,
        SalesService,
        PurchaseService,
        WriteOrdersNudge,
        OrdersService,
        AuditService,
        SaleDashboardService,
        PaymentsService,
        SimulatedPaymentProvider,
        SubmitTokens,
        SoldOutGate,
        IncarnationGuard,
        SoldOutFastPath,
        PurchaseRoute,
        DbPurchase,
        AdminOrdersService,
        DemoRunsService,
      ],
    };
  }
}
