import type { PurchaseAccepted, SubmitToken } from '@flash-sale/contract';
import { Body, Controller, HttpCode, HttpStatus, Param, Post, Res } from '@nestjs/common';
import { ApiAcceptedResponse, ApiCreatedResponse } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import type { AuthUser } from '../common/auth-user';
import { Authenticated, CurrentUser } from '../auth/auth.guard';
import { RateLimit } from '../protection/rate-limit.interceptor';
import { PurchaseDto } from './purchase.dto';
import { purchaseStatus } from './purchase-route';
import { PurchaseService } from './purchase.service';

@Controller('sales/:id')
@Authenticated()
export class PurchaseController {
  constructor(private readonly purchases: PurchaseService) {}

  @Post('tokens')
  @RateLimit('submit-token')
  @HttpCode(HttpStatus.CREATED)
  async issueToken(@CurrentUser() user: AuthUser, @Param('id') saleId: string): Promise<SubmitToken> {
    const { token, expiresAt } = await this.purchases.issueToken(user, saleId);
    return { token, expiresAt: expiresAt.toISOString() };
  }

  /**
   * 202 QUEUED when Redis reserved it (the worker writes the order); 201 when MySQL wrote it now.
   * A verified caller with a valid body is answered before Nest, by purchase-route.ts, which does what
   * this does: what reaches this handler is what the guard or the pipe refuses. Keep the two in step.
   */
  @Post('purchase')
  @ApiAcceptedResponse({ description: 'Reserved in Redis: `{"orderNo", "status": "QUEUED"}`; the worker writes it' })
  @ApiCreatedResponse({ description: 'A MySQL-only strategy wrote it: `{"orderNo", "status": "PENDING_PAYMENT"}`' })
  async purchase(
    @CurrentUser() user: AuthUser,
    @Param('id') saleId: string,
    @Body() body: PurchaseDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<PurchaseAccepted> {
    const accepted = await this.purchases.purchase(user, saleId, body.token, body.quantity ?? 1);
    void reply.status(purchaseStatus(accepted));
    return accepted;
  }
}
