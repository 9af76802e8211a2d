import { type OrderOfSubmitToken, StrategyPurchaseRepository } from '@flash-sale/db';
import { decidePurchaseRequest, ErrorCode, type PurchaseRequestFacts, type SaleTerms } from '@flash-sale/domain';
import { Injectable } from '@nestjs/common';
import { refusal } from './refusals';
import type { PurchaseAccepted } from './stock-strategy';
import { SubmitTokens } from './submit-tokens';

/** A purchase answered by an order MySQL holds: one its token made before (a replay), or one just written. */
export type WrittenOrder = PurchaseAccepted;

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

  /** The order a submit token made, if MySQL has it, as it is now (a replay's answer); another user's → 403. */
  async orderOfToken(submitToken: string, userId: string): Promise<WrittenOrder | undefined> {
    const order = await this.repository.orderOfSubmitToken(submitToken);
    if (!order) return undefined;
    if (order.userId !== userId) throw refusal(ErrorCode.TokenInvalid);
    return replayOf(order);
  }

  /**
   * A replay Redis answered with its reservation `orderNo`: the order as MySQL holds it now, or `QUEUED`
   * while the worker has not written it.
   */
  async replayOfReservation(orderNo: string): Promise<WrittenOrder> {
    const written = await this.repository.writtenOrder(orderNo);
    if (!written) return { orderNo, status: 'QUEUED', made: 'reserved', replay: true };
    return replayOf({ orderNo, ...written });
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
      replay: decided?.kind === 'replay' ? replayOf(bought!) : undefined,
    };
  }
}

function replayOf(order: Omit<OrderOfSubmitToken, 'userId'>): WrittenOrder {
  return {
    orderNo: order.orderNo,
    status: order.status,
    made: order.leaseEpoch === null ? 'written' : 'reserved',
    replay: true,
  };
}
