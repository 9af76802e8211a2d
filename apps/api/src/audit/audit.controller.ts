import type { Audit, SaleDashboard } from '@flash-sale/contract';
import { Controller, Get, Param } from '@nestjs/common';
import { AdminOnly } from '../auth/auth.guard';
import { AuditService } from './audit.service';
import { SaleDashboardService } from './sale-dashboard.service';

/** A sale's proof (the audit) and the admin console's live view of it. */
@Controller('admin/sales')
@AdminOnly()
export class AuditController {
  constructor(
    private readonly audit: AuditService,
    private readonly dashboard: SaleDashboardService,
  ) {}

  @Get(':id/audit')
  auditSale(@Param('id') id: string): Promise<Audit> {
    return this.audit.audit(id);
  }

  /** The admin console's live view: sale, audit, queue depth and the purchase count, in one sample. */
  @Get(':id/dashboard')
  dashboardSample(@Param('id') id: string): Promise<SaleDashboard> {
    return this.dashboard.sample(id);
  }
}
