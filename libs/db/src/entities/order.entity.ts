import type { OrderStatus } from '@flash-sale/domain';
import { Column, Entity } from 'typeorm';
import * as column from './columns';

@Entity('orders')
export class OrderEntity {
  @column.generatedId()
  id!: string;

  /** Unique: the same reservation can never become two orders. */
  @column.varchar(40, { name: 'order_no' })
  orderNo!: string;

  @Column({ name: 'sale_id', type: 'bigint', unsigned: true })
  saleId!: string;

  @column.varchar(64, { name: 'user_id' })
  userId!: string;

  /**
   * Which of the buyer's per-user purchase slots this order occupies (1..perUserLimit), unique per
   * (sale, user) while the order holds units, NULL once it gave them back. So even if Redis forgot
   * a buyer, MySQL refuses a purchase beyond the limit.
   */
  @Column({ name: 'user_slot', type: 'tinyint', unsigned: true, nullable: true })
  userSlot!: number | null;

  @column.unsignedInt()
  quantity!: number;

  @column.unsignedInt({ name: 'amount_cents' })
  amountCents!: number;

  @column.varchar(20)
  status!: OrderStatus;

  /** Compare-and-set version for status changes. */
  @column.unsignedInt({ default: 0 })
  version!: number;

  @column.varchar(200, { name: 'failure_reason', nullable: true })
  failureReason!: string | null;

  /** The submit token of an order made synchronously in MySQL (db-* strategies, Redis-down fallback). */
  @column.varchar(255, { name: 'submit_token', nullable: true })
  submitToken!: string | null;

  /** The Redis incarnation whose lease this order's units came from; NULL when MySQL sold them itself. */
  @column.unsignedInt({ name: 'lease_epoch', nullable: true })
  leaseEpoch!: number | null;

  /** The sale's Redis bucket the order was reserved in (0 when the sale has one, or MySQL sold it). */
  @Column({ type: 'tinyint', unsigned: true, default: 0 })
  bucket!: number;

  /** When the reservation was made in Redis (the buyer's moment), not when the row was written. */
  @column.instant('reserved_at')
  reservedAt!: Date;

  @column.instant('expires_at', { nullable: true })
  expiresAt!: Date | null;

  @column.instant('paid_at', { nullable: true })
  paidAt!: Date | null;

  @column.createdAt()
  createdAt!: Date;

  @column.updatedAt()
  updatedAt!: Date;
}
