import type { SalePurpose, SaleStrategy } from '@flash-sale/domain';
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

  /** Units neither leased to Redis nor held by an order: MySQL may sell or lease them. */
  @Column({ type: 'int', unsigned: true })
  available!: number;

  /** Units leased to Redis that are not an order yet (`available + leased + held == stock`). */
  @Column({ type: 'int', unsigned: true, default: 0 })
  leased!: number;

  /** The part of `leased` granted to a Redis incarnation that lost its state; never sold on again. */
  @Column({ name: 'in_doubt', type: 'int', unsigned: true, default: 0 })
  inDoubt!: number;

  /** The Redis incarnation the sale sells on (0: never loaded into Redis). */
  @Column({ name: 'redis_epoch', type: 'int', unsigned: true, default: 0 })
  redisEpoch!: number;

  /** Incarnations up to this one are settled: their unconverted units are back in `available`. */
  @Column({ name: 'settled_epoch', type: 'int', unsigned: true, default: 0 })
  settledEpoch!: number;

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

  /**
   * Redis buckets (hash slots) a redis-lua sale's leased stock is spread over (docs/architecture.md
   * "Hot sales: buckets"); fixed at creation, since each buyer's records live in their bucket.
   */
  @Column({ type: 'tinyint', unsigned: true, default: 1 })
  buckets!: number;

  /** `shop`, or test data (`load-test`, `bench`, `demo`) that the storefront never lists. */
  @Column({ type: 'varchar', length: 20, default: 'shop' })
  purpose!: SalePurpose;

  @CreateDateColumn({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'datetime', precision: 3 })
  updatedAt!: Date;
}
