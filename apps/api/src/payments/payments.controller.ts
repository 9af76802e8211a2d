import { type AppConfig, InjectAppConfig } from '@flash-sale/config';
import type { Order } from '@flash-sale/contract';
import { DomainError, ErrorCode } from '@flash-sale/domain';
import {
  Body,
  type CanActivate,
  Controller,
  type ExecutionContext,
  HttpCode,
  HttpStatus,
  Injectable,
  Param,
  Post,
  UseGuards,
} from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { Authenticated, CurrentUser } from '../auth/auth.guard';
import type { AuthUser } from '../common/auth-user';
import { rawBodyOf } from '../common/request-body';
import { PaymentCallbackDto } from './payment.dto';
import { isValidPaymentSignature, PAYMENT_SIGNATURE_HEADER } from './payment-signature';
import { PaymentsService } from './payments.service';

/** Only the provider, who knows PAYMENT_WEBHOOK_SECRET, can sign these exact bytes. */
@Injectable()
export class PaymentSignatureGuard implements CanActivate {
  constructor(@InjectAppConfig() private readonly config: AppConfig) {}

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const signature = request.headers[PAYMENT_SIGNATURE_HEADER];
    const rawBody = rawBodyOf(request);
    if (
      rawBody === undefined ||
      typeof signature !== 'string' ||
      !isValidPaymentSignature(rawBody, signature, this.config.payment.webhookSecret)
    ) {
      throw new DomainError(ErrorCode.InvalidSignature, 'The payment callback signature is missing or wrong');
    }
    return true;
  }
}

/** The shopper's side of a payment: paying their own order (in the orders' URL space). */
@Controller('orders')
@Authenticated()
export class OrderPaymentController {
  constructor(private readonly payments: PaymentsService) {}

  @Post(':orderNo/pay')
  @HttpCode(HttpStatus.OK)
  pay(@CurrentUser() user: AuthUser, @Param('orderNo') orderNo: string): Promise<Order> {
    return this.payments.pay(user, orderNo);
  }
}

/** The provider's side: its signed callbacks. */
@Controller('payments')
export class PaymentsController {
  constructor(private readonly payments: PaymentsService) {}

  /** Duplicates are acknowledged (200) but not applied again. */
  @Post('callback')
  @HttpCode(HttpStatus.OK)
  @UseGuards(PaymentSignatureGuard)
  async callback(@Body() body: PaymentCallbackDto): Promise<{ received: true; outcome: string }> {
    return { received: true, outcome: await this.payments.applyNotification(body) };
  }
}
