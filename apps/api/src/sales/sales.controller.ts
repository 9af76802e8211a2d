import type { Sale } from '@flash-sale/contract';
import { Body, Controller, Get, HttpCode, HttpStatus, Param, Patch, Post, Query } from '@nestjs/common';
import { AdminOnly } from '../auth/auth.guard';
import { CreateSaleDto, UpdateSaleDto } from './sale.dto';
import { SalesService } from './sales.service';

@Controller('sales')
export class SalesController {
  constructor(private readonly sales: SalesService) {}

  /** The storefront's sales: shop sales that have not ended. */
  @Get()
  list(): Promise<Sale[]> {
    return this.sales.list();
  }

  @Get(':id')
  get(@Param('id') id: string): Promise<Sale> {
    return this.sales.get(id);
  }
}

@Controller('admin/sales')
@AdminOnly()
export class AdminSalesController {
  constructor(private readonly sales: SalesService) {}

  /** Every sale, test data and ended ones included; `?purpose=` filters. */
  @Get()
  list(@Query('purpose') purpose?: string): Promise<Sale[]> {
    return this.sales.adminList(purpose);
  }

  @Post()
  @HttpCode(HttpStatus.CREATED)
  create(@Body() body: CreateSaleDto): Promise<Sale> {
    return this.sales.create(body);
  }

  @Patch(':id')
  update(@Param('id') id: string, @Body() body: UpdateSaleDto): Promise<Sale> {
    return this.sales.update(id, body);
  }

  @Post(':id/preload')
  @HttpCode(HttpStatus.OK)
  preload(@Param('id') id: string): Promise<Sale> {
    return this.sales.preload(id);
  }
}
