import type { PaymentCallback } from '@flash-sale/contract';
import { IsIn, IsInt, IsString, Matches, Min } from 'class-validator';

/** What the provider posts to /api/payments/callback (signed). */
export class PaymentCallbackDto implements PaymentCallback {
  @IsString()
  @Matches(/^[A-Za-z0-9_-]{1,64}$/)
  outTradeNo!: string;

  @IsString()
  @Matches(/^[A-Za-z0-9_-]{1,64}$/)
  transactionId!: string;

  @IsInt()
  @Min(0)
  amountCents!: number;

  @IsIn(['SUCCESS'])
  status!: 'SUCCESS';
}
