import type { AdminOrderPage } from '@flash-sale/contract';
import { Readable } from 'node:stream';
import { Controller, Get, Param, Query, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { AdminOnly } from '../auth/auth.guard';
import { type AdminOrderQuery, AdminOrdersService } from './admin-orders.service';

@Controller('admin/sales/:id')
@AdminOnly()
export class AdminOrdersController {
  constructor(private readonly orders: AdminOrdersService) {}

  /** `?status=PAID&q=<order number prefix | user id | account name>&cursor=<next>&limit=50` */
  @Get('orders')
  list(@Param('id') saleId: string, @Query() query: AdminOrderQuery): Promise<AdminOrderPage> {
    return this.orders.list(saleId, query);
  }

  /** Every order of the sale; streamed, so a big sale's export does not sit in memory. */
  @Get('orders.csv')
  async csv(@Param('id') saleId: string, @Res() reply: FastifyReply) {
    const lines = this.orders.csv(saleId);
    const first = await lines.next(); // reads the sale first: an unknown sale is still a JSON 404
    const body = Readable.from(
      (async function* () {
        if (!first.done) yield first.value;
        yield* lines;
      })(),
    );
    return reply
      .header('content-type', 'text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="sale-${saleId}-orders.csv"`)
      .send(body);
  }
}
