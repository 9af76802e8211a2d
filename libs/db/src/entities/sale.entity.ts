import type { SaleStrategy } from '@flash-sale/domain';
import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

@Entity('sales')
export class SaleEntity {
  /** BIGINT: the driver returns it as a string, which is also what the API promises for ids. */
  @PrimaryGeneratedColumn({ type: 'bigint', unsigned: true })
  id!: string;

  @Column({ type: 'varchar', length: 120 })
  name!: string;

  @Column({ type: 'varchar', length: 2000, nullable: true })
  description!: string | null;

  @Column({ name: 'image_url', type: 'varchar', length: 500, nullable: true })
  imageUrl!: string | null;

  @Column({ name: 'price_cents', type: 'int', unsigned: true })
  priceCents!: number;

  @Column({ type: 'int', unsigned: true })
  stock!: number;

  /** MySQL's own count of units not held by an order: the last line of defence against oversell. */
  @Column({ type: 'int', unsigned: true })
  available!: number;

  /** Optimistic-lock version: every change of `available` is conditional on it and bumps it. */
  @Column({ type: 'int', unsigned: true, default: 0 })
  version!: number;

  @Column({ name: 'per_user_limit', type: 'int', unsigned: true })
  perUserLimit!: number;

  @Column({ name: 'starts_at', type: 'datetime', precision: 3 })
  startsAt!: Date;

  @Column({ name: 'ends_at', type: 'datetime', precision: 3 })
  endsAt!: Date;

  @Column({ type: 'varchar', length: 20 })
  strategy!: SaleStrategy;

  @Column({ name: 'payment_timeout_seconds', type: 'int', unsigned: true })
  paymentTimeoutSeconds!: number;

  @CreateDateColumn({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'datetime', precision: 3 })
  updatedAt!: Date;
}
