import { SALE_LIMITS, SALE_STRATEGIES, type SaleStatus, type SaleStrategy } from '@flash-sale/domain';
import { IsIn, IsInt, IsISO8601, IsOptional, IsString, IsUrl, Max, MaxLength, Min, MinLength } from 'class-validator';

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

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(SALE_LIMITS.maxPerUserLimit)
  perUserLimit?: number;

  @IsOptional()
  @IsISO8601({ strict: true })
  startsAt?: string;

  @IsISO8601({ strict: true })
  endsAt!: string;

  @IsOptional()
  @IsIn(SALE_STRATEGIES)
  strategy?: SaleStrategy;

  @IsOptional()
  @IsInt()
  @Min(10)
  @Max(SALE_LIMITS.maxPaymentTimeoutSeconds)
  paymentTimeoutSeconds?: number;

  @IsOptional()
  @IsString()
  @MaxLength(2000)
  description?: string;

  @IsOptional()
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
