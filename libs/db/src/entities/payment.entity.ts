import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

/**
 * PENDING: started, provider not heard from. SUCCEEDED: the provider's money moved and the order is
 * PAID. REFUND_REQUIRED: the money moved but the order had already expired or been cancelled.
 */
export type PaymentStatus = 'PENDING' | 'SUCCEEDED' | 'REFUND_REQUIRED';

@Entity('payments')
export class PaymentEntity {
  @PrimaryGeneratedColumn({ type: 'bigint', unsigned: true })
  id!: string;

  @Column({ name: 'order_no', type: 'varchar', length: 40 })
  orderNo!: string;

  @Column({ name: 'out_trade_no', type: 'varchar', length: 64 })
  outTradeNo!: string;

  @Column({ name: 'transaction_id', type: 'varchar', length: 64, nullable: true })
  transactionId!: string | null;

  @Column({ name: 'amount_cents', type: 'int', unsigned: true })
  amountCents!: number;

  @Column({ type: 'varchar', length: 20 })
  status!: PaymentStatus;

  @CreateDateColumn({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'datetime', precision: 3 })
  updatedAt!: Date;

  @Column({ name: 'paid_at', type: 'datetime', precision: 3, nullable: true })
  paidAt!: Date | null;
}
