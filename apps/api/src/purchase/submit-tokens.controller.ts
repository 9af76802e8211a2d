import type { SubmitToken } from '@flash-sale/contract';
import { Controller, HttpCode, HttpStatus, Param, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { AuthUser } from '../common/auth-user';
import { Authenticated, CurrentUser } from '../auth/auth.guard';
import { RateLimit } from '../protection/rate-limit.interceptor';
import { PurchaseService } from './purchase.service';

/** `POST /api/sales/:id/tokens`. The purchase itself is purchase.route.ts (served before Nest). */
@Controller('sales/:id')
@ApiTags('Purchase')
@Authenticated()
export class SubmitTokensController {
  constructor(private readonly purchases: PurchaseService) {}

  @Post('tokens')
  @RateLimit('submit-token')
  @HttpCode(HttpStatus.CREATED)
  async issueToken(@CurrentUser() user: AuthUser, @Param('id') saleId: string): Promise<SubmitToken> {
    const { token, expiresAt } = await this.purchases.issueToken(user, saleId);
    return { token, expiresAt: expiresAt.toISOString() };
  }
}
