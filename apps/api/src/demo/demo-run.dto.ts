import { SALE_STRATEGIES, type SaleStrategy } from '@flash-sale/domain';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, ArrayUnique, IsArray, IsIn, IsInt, Max, Min } from 'class-validator';
import { IsOptionalField } from '../common/validation';

/**
 * The demonstration's bounds: a burst the API can fire at itself in a few seconds on a laptop, and
 * never a load test in disguise (k6 is for that).
 */
export const DEMO_LIMITS = { maxStock: 500, maxBuyers: 2_000 } as const;

/** naive-unsafe first: the oversell is what the audience waits for. */
export const DEMO_DEFAULT_STRATEGIES: readonly SaleStrategy[] = [
  'naive-unsafe',
  'db-optimistic',
  'db-pessimistic',
  'redis-lua',
];

export class CreateDemoRunDto {
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

  @ApiPropertyOptional({ enum: SALE_STRATEGIES, isArray: true, description: 'Default: all four' })
  @IsOptionalField()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(SALE_STRATEGIES.length)
  @ArrayUnique()
  @IsIn(SALE_STRATEGIES, { each: true })
  strategies?: SaleStrategy[];
}
