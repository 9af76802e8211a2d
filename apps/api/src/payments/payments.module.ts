import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { MetricsModule } from '../metrics/metrics.module';
import { OrdersModule } from '../orders/orders.module';
import { OrderPaymentController, PaymentsController } from './payments.controller';
import { PaymentsService } from './payments.service';
import { SimulatedPaymentProvider } from './simulated-payment-provider';

/** Paying an order through the simulated provider, and the provider's idempotent callbacks. */
@Module({
  imports: [AuthModule, MetricsModule, OrdersModule],
  controllers: [OrderPaymentController, PaymentsController],
  providers: [PaymentsService, SimulatedPaymentProvider],
})
export class PaymentsModule {}
