import { IsOptionalField } from '../common/validation';
import { SALE_LIMITS } from '@flash-sale/domain';
import { IsInt, IsString, Matches, Max, Min } from 'class-validator';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

export class PurchaseDto {
  @ApiProperty({
    description: 'Submit token from POST /api/sales/{id}/tokens: single use, bound to the caller and the sale',
    pattern: '^[A-Za-z0-9_.-]{8,255}$',
  })
  @IsString()
  @Matches(/^[A-Za-z0-9_.-]{8,255}$/, { message: 'token must be a submit token from POST /api/sales/:id/tokens' })
  token!: string;

  @ApiPropertyOptional({
    type: 'integer',
    description: 'Units to buy',
    minimum: 1,
    maximum: SALE_LIMITS.maxQuantity,
    default: 1,
  })
  @IsOptionalField()
  @IsInt()
  @Min(1)
  @Max(SALE_LIMITS.maxQuantity)
  quantity?: number;
}
