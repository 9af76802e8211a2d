import { IsOptionalField } from '../common/validation';
import { SALE_LIMITS, SALE_STRATEGIES, type SaleStatus, type SaleStrategy } from '@flash-sale/domain';
import { IsIn, IsInt, IsISO8601, IsString, IsUrl, Max, MaxLength, Min, MinLength, ValidateIf } from 'class-validator';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

export class CreateSaleDto {
  @ApiProperty({ minLength: 1, maxLength: 120, example: 'Sneakers' })
  @IsString()
  @MinLength(1)
  @MaxLength(120)
  name!: string;

  @ApiProperty({ type: 'integer', description: 'Unit price in cents', minimum: 0, maximum: 100_000_000, example: 4999 })
  @IsInt()
  @Min(0)
  @Max(100_000_000)
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
    default: 1,
  })
  @IsOptionalField()
  @IsInt()
  @Min(1)
  @Max(SALE_LIMITS.maxPerUserLimit)
  perUserLimit?: number;

  @ApiPropertyOptional({ description: 'ISO-8601; now when absent', format: 'date-time' })
  @IsOptionalField()
  @IsISO8601({ strict: true })
  startsAt?: string;

  @ApiProperty({ description: 'ISO-8601, after startsAt', format: 'date-time', example: '2030-01-01T00:00:00Z' })
  @IsISO8601({ strict: true })
  endsAt!: string;

  @ApiPropertyOptional({ enum: SALE_STRATEGIES, default: 'redis-lua' })
  @IsOptionalField()
  @IsIn(SALE_STRATEGIES)
  strategy?: SaleStrategy;

  @ApiPropertyOptional({
    type: 'integer',
    description: 'How long an order waits for payment before it expires (seconds)',
    default: 600,
    minimum: 10,
    maximum: SALE_LIMITS.maxPaymentTimeoutSeconds,
  })
  @IsOptionalField()
  @IsInt()
  @Min(10)
  @Max(SALE_LIMITS.maxPaymentTimeoutSeconds)
  paymentTimeoutSeconds?: number;

  @ApiPropertyOptional({ maxLength: 2000 })
  @IsOptionalField()
  @IsString()
  @MaxLength(2000)
  description?: string;

  @ApiPropertyOptional({ description: 'http(s) URL of a picture', maxLength: 500, format: 'uri' })
  @IsOptionalField()
  @IsUrl({ require_protocol: true, protocols: ['http', 'https'] })
  @MaxLength(500)
  imageUrl?: string;
}

/**
 * `PATCH /api/admin/sales/:id`: what may change once a sale exists. Stock is not among them: the units
 * are accounted for by the stock ledger (MySQL and Redis), and changing them is a ledger operation.
 * Ending a sale early is setting `endsAt` to now: the usual window checks then refuse purchases.
 */
export class UpdateSaleDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: 120 })
  @IsOptionalField()
  @IsString()
  @MinLength(1)
  @MaxLength(120)
  name?: string;

  @ApiPropertyOptional({ maxLength: 2000, nullable: true })
  @IsOptionalField()
  @IsString()
  @MaxLength(2000)
  description?: string;

  @ApiPropertyOptional({ description: 'http(s) URL of a picture; "" removes it', maxLength: 500 })
  @IsOptionalField()
  @ValidateIf((_object, value) => value !== '')
  @IsUrl({ require_protocol: true, protocols: ['http', 'https'] })
  @MaxLength(500)
  imageUrl?: string;

  @ApiPropertyOptional({ description: 'ISO-8601; now (or earlier) ends the sale at once', format: 'date-time' })
  @IsOptionalField()
  @IsISO8601({ strict: true })
  endsAt?: string;
}

/** `Sale` of API.md. */
export interface SaleView {
  id: string;
  name: string;
  description: string | null;
  imageUrl: string | null;
  priceCents: number;
  stock: number;
  remaining: number;
  perUserLimit: number;
  startsAt: string;
  endsAt: string;
  strategy: SaleStrategy;
  paymentTimeoutSeconds: number;
  status: SaleStatus;
}
