import { Body, Controller, HttpCode, HttpStatus, Param, Post } from '@nestjs/common';
import type { AuthUser } from '../auth/auth-user';
import { Authenticated, CurrentUser } from '../auth/auth.guard';
import { PurchaseDto } from './purchase.dto';
import { PurchaseService } from './purchase.service';

@Controller('sales/:id')
@Authenticated()
export class PurchaseController {
  constructor(private readonly purchases: PurchaseService) {}

  @Post('tokens')
  @HttpCode(HttpStatus.CREATED)
  async issueToken(@CurrentUser() user: AuthUser, @Param('id') saleId: string) {
    const { token, expiresAt } = await this.purchases.issueToken(user, saleId);
    return { token, expiresAt: expiresAt.toISOString() };
  }

  @Post('purchase')
  @HttpCode(HttpStatus.ACCEPTED)
  purchase(@CurrentUser() user: AuthUser, @Param('id') saleId: string, @Body() body: PurchaseDto) {
    return this.purchases.purchase(user, saleId, body.token, body.quantity ?? 1);
  }
}
