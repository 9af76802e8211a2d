import { ErrorCode } from '@flash-sale/domain';
import { Injectable } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { toErrorResponse } from '../common/error-body';
import { MetricsService } from '../metrics/metrics.service';
import { SaleCatalog } from '../sales/sale-catalog';
import type { PurchaseOrder } from './purchase-body';
import { refusal } from './refusals';
import { SoldOutGate } from './sold-out-gate';

const SOLD_OUT_ERROR = refusal(ErrorCode.SoldOut);
const SOLD_OUT = toErrorResponse(SOLD_OUT_ERROR);

/**
 * After a sale sells out, nearly all of its traffic is buyers who will be told 410 SOLD_OUT. The
 * purchase route (purchase.route.ts) asks this first and, when `SoldOutGate` is certain, the answer is
 * given here, without touching Redis: no reservation script, and no rate limit counted (docs/api.md's
 * sold-out exception — a final answer that changes nothing needs no protection). It is asked only once
 * the access token (401) and the body (400) are known to be valid; it decides only for a known sale (404)
 * whose window, token, limit and stock the gate vouches for, and answers what the full path would (same
 * status, body, metric and log line).
 */
@Injectable()
export class SoldOutFastPath {
  constructor(
    private readonly catalog: SaleCatalog,
    private readonly gate: SoldOutGate,
    private readonly metrics: MetricsService,
  ) {}

  /** True when 410 SOLD_OUT is certainly the answer (then `answer` gives it); false: ask Redis. */
  refuses(saleId: string, userId: string, order: PurchaseOrder): boolean {
    // The flag lookup first: on a sale that is not flagged (every live sale) nothing else is done here.
    if (!this.gate.isFlagged(saleId)) return false;
    const sale = this.catalog.peek(saleId);
    if (!sale || sale.strategy !== 'redis-lua') return false;
    return this.gate.refuses(sale, userId, order.token, order.quantity);
  }

  /** Redis just said SOLD_OUT and the gate is reading the sale: ask again once it has (never rejects). */
  learning(saleId: string): Promise<void> | undefined {
    return this.gate.learning(saleId);
  }

  answer(reply: FastifyReply): void {
    this.metrics.countRefusedPurchase(SOLD_OUT_ERROR);
    void reply.status(SOLD_OUT.status).send(SOLD_OUT.body);
  }
}
