import { Controller, Get, HttpCode, HttpStatus, Param, Post } from '@nestjs/common';
import type { AuthUser } from '../auth/auth-user';
import { Authenticated, CurrentUser } from '../auth/auth.guard';
import { PaymentsService } from '../payments/payments.service';
import { OrdersService } from './orders.service';

@Controller('orders')
@Authenticated()
export class OrdersController {
  constructor(
    private readonly orders: OrdersService,
    private readonly payments: PaymentsService,
  ) {}

  @Get()
  list(@CurrentUser() user: AuthUser) {
    return this.orders.listOwn(user);
  }

  @Get(':orderNo')
  get(@CurrentUser() user: AuthUser, @Param('orderNo') orderNo: string) {
    return this.orders.get(user, orderNo);
  }

  @Post(':orderNo/pay')
  @HttpCode(HttpStatus.OK)
  pay(@CurrentUser() user: AuthUser, @Param('orderNo') orderNo: string) {
    return this.payments.pay(user, orderNo);
  }

  @Post(':orderNo/cancel')
  @HttpCode(HttpStatus.OK)
  cancel(@CurrentUser() user: AuthUser, @Param('orderNo') orderNo: string) {
    return this.orders.cancel(user, orderNo);
  }
}
