import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { MetricsModule } from '../metrics/metrics.module';
import { SalesModule } from '../sales/sales.module';
import { AuditController } from './audit.controller';
import { AuditService } from './audit.service';
import { SaleDashboardService } from './sale-dashboard.service';

/** A sale's audit (the proof that nothing was oversold, lost or duplicated) and its live dashboard. */
@Module({
  imports: [AuthModule, MetricsModule, SalesModule],
  controllers: [AuditController],
  providers: [AuditService, SaleDashboardService],
})
export class AuditModule {}
