import type { Order } from '@flash-sale/contract';
import { Controller, Get, HttpCode, HttpStatus, Param, Post } from '@nestjs/common';
import type { AuthUser } from '../common/auth-user';
import { Authenticated, CurrentUser } from '../auth/auth.guard';
import { OrdersService } from './orders.service';

@Controller('orders')
@Authenticated()
export class OrdersController {
  constructor(private readonly orders: OrdersService) {}

  @Get()
  list(@CurrentUser() user: AuthUser): Promise<Order[]> {
    return this.orders.listOwn(user);
  }

  @Get(':orderNo')
  get(@CurrentUser() user: AuthUser, @Param('orderNo') orderNo: string): Promise<Order> {
    return this.orders.get(user, orderNo);
  }

  @Post(':orderNo/cancel')
  @HttpCode(HttpStatus.OK)
  cancel(@CurrentUser() user: AuthUser, @Param('orderNo') orderNo: string): Promise<Order> {
    return this.orders.cancel(user, orderNo);
  }
}
