import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { SaleCatalog } from './sale-catalog';
import { AdminSalesController, SalesController } from './sales.controller';
import { SalesService } from './sales.service';

/** Sales: the public catalogue and the admin's create, edit and preload. */
@Module({
  imports: [AuthModule],
  controllers: [SalesController, AdminSalesController],
  providers: [SaleCatalog, SalesService],
  exports: [SaleCatalog, SalesService],
})
export class SalesModule {}
