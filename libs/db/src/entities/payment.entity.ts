import { Entity } from 'typeorm';
import * as column from './columns';

/**
 * PENDING: started, provider not heard from. SUCCEEDED: the provider's money moved and the order is
 * PAID. REFUND_REQUIRED: the money moved but the order had already expired or been cancelled.
 */
export type PaymentStatus = 'PENDING' | 'SUCCEEDED' | 'REFUND_REQUIRED';

@Entity('payments')
export class PaymentEntity {
  @column.generatedId()
  id!: string;

  @column.varchar(40, { name: 'order_no' })
  orderNo!: string;

  @column.varchar(64, { name: 'out_trade_no' })
  outTradeNo!: string;

  @column.varchar(64, { name: 'transaction_id', nullable: true })
  transactionId!: string | null;

  @column.unsignedInt({ name: 'amount_cents' })
  amountCents!: number;

  @column.varchar(20)
  status!: PaymentStatus;

  @column.createdAt()
  createdAt!: Date;

  @column.updatedAt()
  updatedAt!: Date;

  @column.instant('paid_at', { nullable: true })
  paidAt!: Date | null;
}
