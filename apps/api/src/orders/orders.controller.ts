import { Controller, Get, Param } from '@nestjs/common';
import type { AuthUser } from '../auth/auth-user';
import { Authenticated, CurrentUser } from '../auth/auth.guard';
import { OrdersService } from './orders.service';

@Controller('orders')
@Authenticated()
export class OrdersController {
  constructor(private readonly orders: OrdersService) {}

  @Get()
  list(@CurrentUser() user: AuthUser) {
    return this.orders.listOwn(user);
  }

  @Get(':orderNo')
  get(@CurrentUser() user: AuthUser, @Param('orderNo') orderNo: string) {
    return this.orders.get(user, orderNo);
  }
}
