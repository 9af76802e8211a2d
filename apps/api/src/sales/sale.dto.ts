import {
  type CreateSaleRequest,
  SALE_DEFAULTS,
  SALE_LIMITS,
  SALE_PURPOSES,
  SALE_STRATEGIES,
  type SalePurpose,
  type SaleStrategy,
  type UpdateSaleRequest,
  WAITING_ROOM_DEFAULTS,
  WAITING_ROOM_LIMITS,
  type WaitingRoomRequest,
} from '@flash-sale/contract';
import { Type } from 'class-transformer';
import { applyDecorators } from '@nestjs/common';
import {
  IsIn,
  IsInt,
  IsISO8601,
  IsObject,
  IsString,
  IsUrl,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptionalField } from '../common/validation';

/** The rules of the fields that creating and editing a sale share. */
const IsSaleName = () => applyDecorators(IsString(), MinLength(1), MaxLength(SALE_LIMITS.maxNameLength));
const IsSaleDescription = () => applyDecorators(IsString(), MaxLength(SALE_LIMITS.maxDescriptionLength));
const IsPictureUrl = () =>
  applyDecorators(
    IsUrl({ require_protocol: true, protocols: ['http', 'https'] }),
    MaxLength(SALE_LIMITS.maxImageUrlLength),
  );
const IsInstant = () => IsISO8601({ strict: true });

/** `waitingRoom` of a create or edit body (docs/api.md "The waiting room"). */
export class WaitingRoomDto implements WaitingRoomRequest {
  @ApiProperty({ description: 'Buyers admitted per second', minimum: WAITING_ROOM_LIMITS.minAdmitPerSecond })
  @IsInt()
  @Min(WAITING_ROOM_LIMITS.minAdmitPerSecond)
  @Max(WAITING_ROOM_LIMITS.maxAdmitPerSecond)
  admitPerSecond!: number;

  @ApiPropertyOptional({ description: 'Cap of admitted buyers still shopping; absent = no cap', minimum: 1 })
  @IsOptionalField()
  @IsInt()
  @Min(1)
  @Max(WAITING_ROOM_LIMITS.maxMaxShopping)
  maxShopping?: number;

  @ApiPropertyOptional({
    description: 'How long an admission pass is valid',
    default: WAITING_ROOM_DEFAULTS.passSeconds,
    minimum: WAITING_ROOM_LIMITS.minPassSeconds,
    maximum: WAITING_ROOM_LIMITS.maxPassSeconds,
  })
  @IsOptionalField()
  @IsInt()
  @Min(WAITING_ROOM_LIMITS.minPassSeconds)
  @Max(WAITING_ROOM_LIMITS.maxPassSeconds)
  passSeconds?: number;
}

/** A room, or `null` for none: an object is validated field by field. */
const IsWaitingRoom = () =>
  applyDecorators(
    ApiPropertyOptional({ type: WaitingRoomDto, nullable: true }),
    IsOptionalField(),
    ValidateIf((_object, value) => value !== null),
    IsObject(),
    ValidateNested(),
    Type(() => WaitingRoomDto),
  );

export class CreateSaleDto implements CreateSaleRequest {
  @ApiProperty({ minLength: 1, maxLength: SALE_LIMITS.maxNameLength, example: 'Sneakers' })
  @IsSaleName()
  name!: string;

  @ApiProperty({
    type: 'integer',
    description: 'Unit price in cents',
    minimum: 0,
    maximum: SALE_LIMITS.maxPriceCents,
    example: 4999,
  })
  @IsInt()
  @Min(0)
  @Max(SALE_LIMITS.maxPriceCents)
  priceCents!: number;

  @ApiProperty({
    type: 'integer',
    description: 'Units for sale',
    minimum: 1,
    maximum: SALE_LIMITS.maxStock,
    example: 100,
  })
  @IsInt()
  @Min(1)
  @Max(SALE_LIMITS.maxStock)
  stock!: number;

  @ApiPropertyOptional({
    type: 'integer',
    description: 'Units one buyer may hold',
    minimum: 1,
    maximum: SALE_LIMITS.maxPerUserLimit,
    default: SALE_DEFAULTS.perUserLimit,
  })
  @IsOptionalField()
  @IsInt()
  @Min(1)
  @Max(SALE_LIMITS.maxPerUserLimit)
  perUserLimit?: number;

  @ApiPropertyOptional({ description: 'ISO-8601; now when absent', format: 'date-time' })
  @IsOptionalField()
  @IsInstant()
  startsAt?: string;

  @ApiProperty({ description: 'ISO-8601, after startsAt', format: 'date-time', example: '2030-01-01T00:00:00Z' })
  @IsInstant()
  endsAt!: string;

  @ApiPropertyOptional({ enum: SALE_STRATEGIES, default: SALE_DEFAULTS.strategy })
  @IsOptionalField()
  @IsIn(SALE_STRATEGIES)
  strategy?: SaleStrategy;

  @ApiPropertyOptional({
    type: 'integer',
    description: 'How long an order waits for payment before it expires (seconds)',
    default: SALE_DEFAULTS.paymentTimeoutSeconds,
    minimum: SALE_LIMITS.minPaymentTimeoutSeconds,
    maximum: SALE_LIMITS.maxPaymentTimeoutSeconds,
  })
  @IsOptionalField()
  @IsInt()
  @Min(SALE_LIMITS.minPaymentTimeoutSeconds)
  @Max(SALE_LIMITS.maxPaymentTimeoutSeconds)
  paymentTimeoutSeconds?: number;

  @ApiPropertyOptional({ maxLength: SALE_LIMITS.maxDescriptionLength })
  @IsOptionalField()
  @IsSaleDescription()
  description?: string;

  @ApiPropertyOptional({
    description: 'http(s) URL of a picture',
    maxLength: SALE_LIMITS.maxImageUrlLength,
    format: 'uri',
  })
  @IsOptionalField()
  @IsPictureUrl()
  imageUrl?: string;

  @ApiPropertyOptional({
    enum: SALE_PURPOSES,
    default: SALE_DEFAULTS.purpose,
    description: 'shop, or test data (load-test, bench, demo) that the storefront never lists',
  })
  @IsOptionalField()
  @IsIn(SALE_PURPOSES)
  purpose?: SalePurpose;

  @ApiPropertyOptional({
    type: 'integer',
    description:
      'redis-lua only: Redis buckets (cluster hash slots) the stock is spread over, for a hot sale on Redis Cluster',
    minimum: 1,
    maximum: SALE_LIMITS.maxBuckets,
  })
  @IsOptionalField()
  @IsInt()
  @Min(1)
  @Max(SALE_LIMITS.maxBuckets)
  buckets?: number;

  @IsWaitingRoom()
  waitingRoom?: WaitingRoomDto | null;
}

/**
 * `PATCH /api/admin/sales/:id`: what may change once a sale exists. Stock is not among them: the units
 * are accounted for by the stock ledger (MySQL and Redis), and changing them is a ledger operation.
 * Ending a sale early is setting `endsAt` to now: the usual window checks then refuse purchases.
 */
export class UpdateSaleDto implements UpdateSaleRequest {
  @ApiPropertyOptional({ minLength: 1, maxLength: SALE_LIMITS.maxNameLength })
  @IsOptionalField()
  @IsSaleName()
  name?: string;

  @ApiPropertyOptional({ maxLength: SALE_LIMITS.maxDescriptionLength, nullable: true })
  @IsOptionalField()
  @IsSaleDescription()
  description?: string;

  @ApiPropertyOptional({
    description: 'http(s) URL of a picture; "" removes it',
    maxLength: SALE_LIMITS.maxImageUrlLength,
  })
  @IsOptionalField()
  @ValidateIf((_object, value) => value !== '')
  @IsPictureUrl()
  imageUrl?: string;

  @ApiPropertyOptional({ description: 'ISO-8601; now (or earlier) ends the sale at once', format: 'date-time' })
  @IsOptionalField()
  @IsInstant()
  endsAt?: string;

  @IsWaitingRoom()
  waitingRoom?: WaitingRoomDto | null;
}
