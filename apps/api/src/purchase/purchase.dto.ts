import { type PurchaseRequest, SALE_LIMITS } from '@flash-sale/contract';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsString, Matches, Max, Min } from 'class-validator';
import { IsOptionalField } from '../common/validation';

const SUBMIT_TOKEN_PATTERN = /^[A-Za-z0-9_.-]{8,255}$/;

export class PurchaseDto implements PurchaseRequest {
  @ApiProperty({
    description: 'Submit token from POST /api/sales/{id}/tokens: single use, bound to the caller and the sale',
    pattern: SUBMIT_TOKEN_PATTERN.source,
  })
  @IsString()
  @Matches(SUBMIT_TOKEN_PATTERN, { message: 'token must be a submit token from POST /api/sales/:id/tokens' })
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

  /**
   * The purchase endpoint's hand check (common/validation.ts, HandCheckedBody): the decorators above,
   * written out, for the bodies they accept — `token` and at most `quantity`, nothing else. Anything
   * else (a missing or malformed field, an extra key) goes to class-validator, which refuses it.
   */
  static readIfValid(body: Readonly<Record<string, unknown>>): PurchaseDto | undefined {
    for (const key in body) {
      if (key !== 'token' && key !== 'quantity') return undefined;
    }
    const { token, quantity } = body;
    if (typeof token !== 'string' || !SUBMIT_TOKEN_PATTERN.test(token)) return undefined;
    const validQuantity =
      quantity === undefined ||
      (typeof quantity === 'number' &&
        Number.isInteger(quantity) &&
        quantity >= 1 &&
        quantity <= SALE_LIMITS.maxQuantity);
    if (!validQuantity) return undefined;
    const dto = new PurchaseDto();
    dto.token = token;
    dto.quantity = quantity;
    return dto;
  }
}
