import type { SalePurpose, SaleStrategy, WaitingRoomSettings } from '@flash-sale/domain';
import { Column, Entity } from 'typeorm';
import * as column from './columns';

@Entity('sales')
export class SaleEntity {
  /** BIGINT: the driver returns it as a string, which is also what the API promises for ids. */
  @column.generatedId()
  id!: string;

  @column.varchar(120)
  name!: string;

  @column.varchar(2000, { nullable: true })
  description!: string | null;

  @column.varchar(500, { name: 'image_url', nullable: true })
  imageUrl!: string | null;

  @column.unsignedInt({ name: 'price_cents' })
  priceCents!: number;

  @column.unsignedInt()
  stock!: number;

  /** Units neither leased to Redis nor held by an order: MySQL may sell or lease them. */
  @column.unsignedInt()
  available!: number;

  /** Units leased to Redis that are not an order yet (`available + leased + held == stock`). */
  @column.unsignedInt({ default: 0 })
  leased!: number;

  /** The part of `leased` granted to a Redis incarnation that lost its state; never sold on again. */
  @column.unsignedInt({ name: 'in_doubt', default: 0 })
  inDoubt!: number;

  /** The Redis incarnation the sale sells on (0: never loaded into Redis). */
  @column.unsignedInt({ name: 'redis_epoch', default: 0 })
  redisEpoch!: number;

  /** Incarnations up to this one are settled: their unconverted units are back in `available`. */
  @column.unsignedInt({ name: 'settled_epoch', default: 0 })
  settledEpoch!: number;

  /** Optimistic-lock version: every change of `available` is conditional on it and bumps it. */
  @column.unsignedInt({ default: 0 })
  version!: number;

  /**
   * The most units the sale's orders ever held beyond its stock: recorded before each cancel or expiry
   * gives units back, so an oversell outlives the orders that made it (the audit's `oversoldPeak`).
   */
  @column.unsignedInt({ name: 'oversold_peak', default: 0 })
  oversoldPeak!: number;

  @column.unsignedInt({ name: 'per_user_limit' })
  perUserLimit!: number;

  @column.instant('starts_at')
  startsAt!: Date;

  @column.instant('ends_at')
  endsAt!: Date;

  /** Bumped by every edit of what Redis copies (window, per-user limit); Redis keeps the version it holds. */
  @column.unsignedInt({ name: 'window_version', default: 0 })
  windowVersion!: number;

  @column.varchar(20)
  strategy!: SaleStrategy;

  @column.unsignedInt({ name: 'payment_timeout_seconds' })
  paymentTimeoutSeconds!: number;

  /**
   * Redis buckets (hash slots) a redis-lua sale's leased stock is spread over (docs/architecture.md
   * "Hot sales: buckets"); fixed at creation, since each buyer's records live in their bucket.
   */
  @Column({ type: 'tinyint', unsigned: true, default: 1 })
  buckets!: number;

  /** `shop`, or test data (`load-test`, `bench`, `demo`) that the storefront never lists. */
  @column.varchar(20, { default: 'shop' })
  purpose!: SalePurpose;

  /** The sale's waiting room (docs/architecture.md "The waiting room"), or null: buyers go straight to buy. */
  @Column({ name: 'waiting_room', type: 'simple-json', nullable: true })
  waitingRoom!: WaitingRoomSettings | null;

  @column.createdAt()
  createdAt!: Date;

  @column.updatedAt()
  updatedAt!: Date;
}
