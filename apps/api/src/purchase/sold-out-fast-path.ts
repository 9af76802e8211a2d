import { ErrorCode } from '@flash-sale/domain';
import { Injectable, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AuthUser } from '../auth/auth-user';
import { AuthGuard } from '../auth/auth.guard';
import { toErrorResponse } from '../common/error-body';
import { MetricsService } from '../ops/metrics.service';
import { SaleCatalog } from '../sales/sale-catalog';
import { PurchaseDto } from './purchase.dto';
import { refusal } from './refusals';
import { SoldOutGate } from './sold-out-gate';

/** The purchase route as Fastify knows it: global prefix `api` + PurchaseController's path. */
const PURCHASE_ROUTE = '/api/sales/:id/purchase';

const SOLD_OUT_ERROR = refusal(ErrorCode.SoldOut);
const SOLD_OUT = toErrorResponse(SOLD_OUT_ERROR);

/**
 * After a sale sells out, nearly all of its traffic is buyers who will be told 410 SOLD_OUT. This
 * Fastify `preHandler` answers those from `SoldOutGate` before Nest's pipeline (guard, pipes,
 * controller, exception filter), which costs more than the answer itself. It decides only when every
 * earlier check of API.md's order is already known to pass — a valid access token (401), a valid body
 * (400), a known sale (404), then the gate's window, token, limit and stock — and answers exactly what
 * the full path would (same status, body, metric and access-log line). Anything else, including every
 * refusal for another reason, goes on to the controller unchanged.
 */
@Injectable()
export class SoldOutFastPath implements OnModuleInit {
  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly auth: AuthGuard,
    private readonly catalog: SaleCatalog,
    private readonly gate: SoldOutGate,
    private readonly metrics: MetricsService,
  ) {}

  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter.getInstance<FastifyInstance>();
    fastify.addHook('preHandler', (request, reply, done) => {
      if (request.method !== 'POST' || request.routeOptions.url !== PURCHASE_ROUTE || !this.certainlySoldOut(request)) {
        done();
        return;
      }
      this.metrics.countRefusedPurchase(SOLD_OUT_ERROR);
      void reply.status(SOLD_OUT.status).send(SOLD_OUT.body);
    });
  }

  private certainlySoldOut(request: FastifyRequest): boolean {
    // The flag lookup first: on a sale that is not flagged (every live sale) nothing else is done here,
    // and the request pays for its token and body checks once, in the guard and the pipe.
    const { id: saleId } = request.params as { id?: string };
    if (!saleId || !this.gate.isFlagged(saleId)) return false;
    const authorization = request.headers.authorization;
    const body = request.body;
    if (!authorization?.startsWith('Bearer ') || typeof body !== 'object' || body === null) return false;
    const sale = this.catalog.peek(saleId);
    const purchase = PurchaseDto.readIfValid(body as Record<string, unknown>);
    if (!sale || sale.strategy !== 'redis-lua' || !purchase) return false;
    let userId: string;
    try {
      // Usually verified already by the admission hook (protection/purchase-admission.ts).
      userId =
        (request as { user?: AuthUser }).user?.id ?? this.auth.userOf(authorization.slice('Bearer '.length).trim()).id;
    } catch {
      return false; // the guard answers 401
    }
    return this.gate.refuses(sale, userId, purchase.token, purchase.quantity ?? 1);
  }
}
