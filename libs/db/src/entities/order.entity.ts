import type { OrderStatus } from '@flash-sale/domain';
import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

@Entity('orders')
export class OrderEntity {
  @PrimaryGeneratedColumn({ type: 'bigint', unsigned: true })
  id!: string;

  /** Unique: the same reservation can never become two orders. */
  @Column({ name: 'order_no', type: 'varchar', length: 40 })
  orderNo!: string;

  @Column({ name: 'sale_id', type: 'bigint', unsigned: true })
  saleId!: string;

  @Column({ name: 'user_id', type: 'varchar', length: 64 })
  userId!: string;

  /**
   * Which of the buyer's per-user purchase slots this order occupies (1..perUserLimit), unique per
   * (sale, user) while the order holds units, NULL once it gave them back. So even if Redis forgot
   * a buyer, MySQL refuses a purchase beyond the limit.
   */
  @Column({ name: 'user_slot', type: 'tinyint', unsigned: true, nullable: true })
  userSlot!: number | null;

  @Column({ type: 'int', unsigned: true })
  quantity!: number;

  @Column({ name: 'amount_cents', type: 'int', unsigned: true })
  amountCents!: number;

  @Column({ type: 'varchar', length: 20 })
  status!: OrderStatus;

  /** Compare-and-set version for status changes. */
  @Column({ type: 'int', unsigned: true, default: 0 })
  version!: number;

  @Column({ name: 'failure_reason', type: 'varchar', length: 200, nullable: true })
  failureReason!: string | null;

  /** The submit token of an order made synchronously in MySQL (db-* strategies, Redis-down fallback). */
  @Column({ name: 'submit_token', type: 'varchar', length: 255, nullable: true })
  submitToken!: string | null;

  /** The Redis incarnation whose lease this order's units came from; NULL when MySQL sold them itself. */
  @Column({ name: 'lease_epoch', type: 'int', unsigned: true, nullable: true })
  leaseEpoch!: number | null;

  /** The sale's Redis bucket the order was reserved in (0 when the sale has one, or MySQL sold it). */
  @Column({ type: 'tinyint', unsigned: true, default: 0 })
  bucket!: number;

  /** When the reservation was made in Redis (the buyer's moment), not when the row was written. */
  @Column({ name: 'reserved_at', type: 'datetime', precision: 3 })
  reservedAt!: Date;

  @Column({ name: 'expires_at', type: 'datetime', precision: 3, nullable: true })
  expiresAt!: Date | null;

  @Column({ name: 'paid_at', type: 'datetime', precision: 3, nullable: true })
  paidAt!: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'datetime', precision: 3 })
  updatedAt!: Date;
}
