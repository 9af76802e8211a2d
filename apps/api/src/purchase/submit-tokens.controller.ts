import type { SubmitToken, SubmitTokenRequest } from '@flash-sale/contract';
import { Body, Controller, HttpCode, HttpStatus, Param, Post } from '@nestjs/common';
import { ApiPropertyOptional, ApiTags } from '@nestjs/swagger';
import { IsString, MaxLength } from 'class-validator';
import { IsOptionalField } from '../common/validation';
import type { AuthUser } from '../common/auth-user';
import { Authenticated, CurrentUser } from '../auth/auth.guard';
import { RateLimit } from '../protection/rate-limit.interceptor';
import { PurchaseService } from './purchase.service';

/** The body of `POST /api/sales/:id/tokens`: none, or the admission pass of a sale with a waiting room. */
export class SubmitTokenDto implements Partial<SubmitTokenRequest> {
  @ApiPropertyOptional({ description: "A waiting room's admission pass (its ticket's `pass`)", maxLength: 100 })
  @IsOptionalField()
  @IsString()
  @MaxLength(100)
  pass?: string;
}

/** `POST /api/sales/:id/tokens`. The purchase itself is purchase.route.ts (served before Nest). */
@Controller('sales/:id')
@ApiTags('Purchase')
@Authenticated()
export class SubmitTokensController {
  constructor(private readonly purchases: PurchaseService) {}

  @Post('tokens')
  @RateLimit('submit-token')
  @HttpCode(HttpStatus.CREATED)
  async issueToken(
    @CurrentUser() user: AuthUser,
    @Param('id') saleId: string,
    @Body() body: SubmitTokenDto,
  ): Promise<SubmitToken> {
    const { token, expiresAt } = await this.purchases.issueToken(user, saleId, body.pass);
    return { token, expiresAt: expiresAt.toISOString() };
  }
}
