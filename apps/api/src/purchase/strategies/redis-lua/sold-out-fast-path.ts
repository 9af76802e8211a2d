import { ErrorCode, type SaleTerms, sellsFromRedis } from '@flash-sale/domain';
import { Injectable } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { toErrorResponse } from '../../../common/error-body';
import { MetricsService } from '../../../metrics/metrics.service';
import { SaleCatalog } from '../../../sales/sale-catalog';
import type { PurchaseOrder } from '../../purchase-body';
import { refusal } from '../../refusals';
import type { EarlyAnswer } from '../../stock-strategy';
import { SoldOutGate } from './sold-out-gate';

const SOLD_OUT_ERROR = refusal(ErrorCode.SoldOut);
const SOLD_OUT = toErrorResponse(SOLD_OUT_ERROR);

/**
 * After a sale sells out, nearly all of its traffic is buyers who will be told 410 SOLD_OUT. The
 * purchase route (purchase.route.ts) asks this first (redis-lua's early answer) and, when `SoldOutGate`
 * is certain, the answer is given here, without touching Redis: no reservation script, and no rate
 * limit counted (docs/api.md's sold-out exception — a final answer that changes nothing needs no
 * protection). It is asked only once
 * the access token (401) and the body (400) are known to be valid; it decides only for a known sale (404)
 * whose window, token, limit and stock the gate vouches for, and answers what the full path would (same
 * status, body, metric and log line).
 */
@Injectable()
export class SoldOutFastPath implements EarlyAnswer {
  constructor(
    private readonly catalog: SaleCatalog,
    private readonly gate: SoldOutGate,
    private readonly metrics: MetricsService,
  ) {}

  /**
   * True when 410 SOLD_OUT is certainly the answer (then `give` sends it); false: ask the sale's
   * strategy. Synchronous for every live sale (nothing is flagged); a promise only while the gate is
   * reading a sale that just sold out (Redis just said SOLD_OUT: asked again once it has), or for a
   * flagged sale whose definition this instance no longer holds (nobody bought for longer than the
   * catalog keeps it) — then one read of it, shared by the whole flood, rather than every buyer of the
   * flood asking Redis and spending rate limits until it is back. Never rejects.
   */
  applies(saleId: string, userId: string, order: PurchaseOrder): boolean | Promise<boolean> {
    const learning = this.gate.learning(saleId);
    if (learning) return learning.then(() => this.decide(saleId, userId, order));
    return this.decide(saleId, userId, order);
  }

  private decide(saleId: string, userId: string, order: PurchaseOrder): boolean | Promise<boolean> {
    // The flag lookup first: on a sale that is not flagged (every live sale) nothing else is done here.
    if (!this.gate.isFlagged(saleId)) return false;
    const sale = this.catalog.peek(saleId);
    if (sale) return this.certain(sale, userId, order);
    return this.catalog.get(saleId).then(
      (loaded) => this.certain(loaded, userId, order),
      () => false, // the full path answers (its 404, or the dependency's 503)
    );
  }

  private certain(sale: SaleTerms, userId: string, order: PurchaseOrder): boolean {
    // The gate vouches for the sales Redis sells from, whose state it reads.
    return sellsFromRedis(sale.strategy) && this.gate.refuses(sale, userId, order.token, order.quantity);
  }

  give(reply: FastifyReply): void {
    this.metrics.countRefusedPurchase(SOLD_OUT_ERROR);
    void reply.status(SOLD_OUT.status).send(SOLD_OUT.body);
  }
}
