import { IsOptionalField } from '../common/validation';
import { SALE_LIMITS } from '@flash-sale/domain';
import { IsInt, IsString, Matches, Max, Min } from 'class-validator';

export class PurchaseDto {
  @IsString()
  @Matches(/^[A-Za-z0-9_-]{8,64}$/, { message: 'token must be a submit token from POST /api/sales/:id/tokens' })
  token!: string;

  @IsOptionalField()
  @IsInt()
  @Min(1)
  @Max(SALE_LIMITS.maxQuantity)
  quantity?: number;
}
