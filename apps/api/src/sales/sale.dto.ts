import { IsOptionalField } from '../common/validation';
import { SALE_LIMITS, SALE_STRATEGIES, type SaleStatus, type SaleStrategy } from '@flash-sale/domain';
import { IsIn, IsInt, IsISO8601, IsString, IsUrl, Max, MaxLength, Min, MinLength } from 'class-validator';

export class CreateSaleDto {
  @IsString()
  @MinLength(1)
  @MaxLength(120)
  name!: string;

  @IsInt()
  @Min(0)
  @Max(100_000_000)
  priceCents!: number;

  @IsInt()
  @Min(1)
  @Max(SALE_LIMITS.maxStock)
  stock!: number;

  @IsOptionalField()
  @IsInt()
  @Min(1)
  @Max(SALE_LIMITS.maxPerUserLimit)
  perUserLimit?: number;

  @IsOptionalField()
  @IsISO8601({ strict: true })
  startsAt?: string;

  @IsISO8601({ strict: true })
  endsAt!: string;

  @IsOptionalField()
  @IsIn(SALE_STRATEGIES)
  strategy?: SaleStrategy;

  @IsOptionalField()
  @IsInt()
  @Min(10)
  @Max(SALE_LIMITS.maxPaymentTimeoutSeconds)
  paymentTimeoutSeconds?: number;

  @IsOptionalField()
  @IsString()
  @MaxLength(2000)
  description?: string;

  @IsOptionalField()
  @IsUrl({ require_protocol: true, protocols: ['http', 'https'] })
  @MaxLength(500)
  imageUrl?: string;
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
