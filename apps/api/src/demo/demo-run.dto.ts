import { type CreateDemoRunRequest, DEMO_LIMITS, SALE_STRATEGIES, type SaleStrategy } from '@flash-sale/contract';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, ArrayUnique, IsArray, IsBoolean, IsIn, IsInt, Max, Min } from 'class-validator';
import { IsOptionalField } from '../common/validation';

export { DEMO_DEFAULT_STRATEGIES, DEMO_LIMITS } from '@flash-sale/contract';

export class CreateDemoRunDto implements CreateDemoRunRequest {
  @ApiProperty({ type: 'integer', minimum: 1, maximum: DEMO_LIMITS.maxStock, example: 50 })
  @IsInt()
  @Min(1)
  @Max(DEMO_LIMITS.maxStock)
  stock!: number;

  @ApiProperty({
    type: 'integer',
    description: 'Distinct buyers, one unit each',
    minimum: 1,
    maximum: DEMO_LIMITS.maxBuyers,
    example: 400,
  })
  @IsInt()
  @Min(1)
  @Max(DEMO_LIMITS.maxBuyers)
  buyers!: number;

  @ApiPropertyOptional({ enum: SALE_STRATEGIES, isArray: true, description: 'Default: every strategy' })
  @IsOptionalField()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(SALE_STRATEGIES.length)
  @ArrayUnique()
  @IsIn(SALE_STRATEGIES, { each: true })
  strategies?: SaleStrategy[];

  @ApiPropertyOptional({
    type: 'boolean',
    description:
      "redis-lock and redis-lock-unfenced: the first lock holder stops past the lock's TTL between its read and its write",
    default: false,
  })
  @IsOptionalField()
  @IsBoolean()
  pauseLockHolder?: boolean;
}
