import { ErrorCode } from '@flash-sale/domain';
import { Injectable } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { toErrorResponse } from '../common/error-body';
import { MetricsService } from '../ops/metrics.service';
import { SaleCatalog } from '../sales/sale-catalog';
import type { PurchaseDto } from './purchase.dto';
import { refusal } from './refusals';
import { SoldOutGate } from './sold-out-gate';

const SOLD_OUT_ERROR = refusal(ErrorCode.SoldOut);
const SOLD_OUT = toErrorResponse(SOLD_OUT_ERROR);

/**
 * After a sale sells out, nearly all of its traffic is buyers who will be told 410 SOLD_OUT. The
 * purchase route (purchase-route.ts) asks this first and, when `SoldOutGate` is certain, the answer is
 * given here, without the reservation script's round trip. It is asked only once every earlier check of
 * API.md's order is known to pass — a valid access token (401), no rate limit (429), a valid body (400)
 * — and it decides only for a known sale (404) whose window, token, limit and stock the gate vouches
 * for; it answers exactly what the full path would (same status, body, metric and access-log line).
 */
@Injectable()
export class SoldOutFastPath {
  constructor(
    private readonly catalog: SaleCatalog,
    private readonly gate: SoldOutGate,
    private readonly metrics: MetricsService,
  ) {}

  /** Answers 410 SOLD_OUT and returns true when that is certainly the answer; false: ask Redis. */
  answered(saleId: string, userId: string, purchase: PurchaseDto, reply: FastifyReply): boolean {
    // The flag lookup first: on a sale that is not flagged (every live sale) nothing else is done here.
    if (!this.gate.isFlagged(saleId)) return false;
    const sale = this.catalog.peek(saleId);
    if (!sale || sale.strategy !== 'redis-lua') return false;
    if (!this.gate.refuses(sale, userId, purchase.token, purchase.quantity ?? 1)) return false;
    this.metrics.countRefusedPurchase(SOLD_OUT_ERROR);
    void reply.status(SOLD_OUT.status).send(SOLD_OUT.body);
    return true;
  }
}
