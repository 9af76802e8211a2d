import { StrategyPurchaseRepository } from '@flash-sale/db';
import { decidePurchaseRequest, ErrorCode, type PurchaseRequestFacts, type SaleTerms } from '@flash-sale/domain';
import { Injectable } from '@nestjs/common';
import { refusal } from './refusals';
import type { PurchaseAccepted } from './stock-strategy';
import { SubmitTokens } from './submit-tokens';

/** A purchase answered by the order MySQL already holds for its submit token. */
export type WrittenOrder = PurchaseAccepted & { status: 'PENDING_PAYMENT' };

/**
 * What MySQL knows of a submit token: the order it made (by any path), and with it the purchase rules'
 * window, token and replay checks for the paths that sell from MySQL. The one place a token is looked up
 * in MySQL's orders.
 */
@Injectable()
export class TokenOrders {
  constructor(
    private readonly repository: StrategyPurchaseRepository,
    private readonly submitTokens: SubmitTokens,
  ) {}

  /** The order a submit token made, if MySQL has it; another user's → 403. */
  async orderOfToken(submitToken: string, userId: string): Promise<WrittenOrder | undefined> {
    const order = await this.repository.orderOfSubmitToken(submitToken);
    if (!order) return undefined;
    if (order.userId !== userId) throw refusal(ErrorCode.TokenInvalid);
    return { orderNo: order.orderNo, status: 'PENDING_PAYMENT' };
  }

  /**
   * The purchase rules' window, submit token and replay, asked of MySQL: the order a token made answers
   * it (a replay), expired or not, as in Redis; an unbought token must be unexpired. Throws a refusal.
   */
  async decideRequest(
    sale: SaleTerms,
    userId: string,
    submitToken: string,
  ): Promise<{ request: PurchaseRequestFacts; replay?: WrittenOrder }> {
    const nowMs = Date.now();
    const request: PurchaseRequestFacts = {
      userId,
      nowMs,
      startsAtMs: sale.startsAt.getTime(),
      endsAtMs: sale.endsAt.getTime(),
      submitToken: { issuedToBuyer: this.submitTokens.verify(submitToken, sale.id, userId, nowMs) },
    };
    // Looked up only once the signature holds: it names the sale, which the orders' token column does not.
    const bought = this.submitTokens.signedFor(submitToken, sale.id, userId)
      ? await this.repository.orderOfSubmitToken(submitToken)
      : undefined;
    request.submitToken.boughtBy = bought?.userId;
    const decided = decidePurchaseRequest(request);
    if (decided?.kind === 'refuse') throw refusal(decided.code);
    return {
      request,
      replay: decided?.kind === 'replay' ? { orderNo: bought!.orderNo, status: 'PENDING_PAYMENT' } : undefined,
    };
  }
}
