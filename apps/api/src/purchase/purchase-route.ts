import { HttpStatus, Injectable, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AuthUser } from '../common/auth-user';
import { sendError } from '../common/error.filter';
import { UnreadableBody } from '../common/request-body';
import { PurchaseDto } from './purchase.dto';
import { MetricsService } from '../metrics/metrics.service';
import { PurchaseRateLimit } from '../protection/purchase-rate-limit';
import { type PurchaseAccepted, PurchaseService } from './purchase.service';
import { SoldOutFastPath } from './sold-out-fast-path';

/** The purchase route as Fastify knows it: global prefix `api` + PurchaseController's path. */
export const PURCHASE_ROUTE = '/api/sales/:id/purchase';

/** 202 QUEUED when Redis reserved it (the worker writes the order); 201 when MySQL wrote it now. */
export function purchaseStatus(accepted: PurchaseAccepted): HttpStatus {
  return accepted.status === 'QUEUED' ? HttpStatus.ACCEPTED : HttpStatus.CREATED;
}

/**
 * The purchase endpoint's ordinary requests, answered from a Fastify `preHandler` instead of Nest's
 * pipeline. By the time it runs, the admission hook (purchase/purchase-admission.ts) has verified
 * the access token and spent the rate limits, and Fastify has parsed the body; what Nest would add
 * for PurchaseController.purchase — the guard reading `request.user` again, the validation pipe, the
 * parameter decorators, the interceptor chain, the exception filter — is the same work, done through
 * several layers of promises per request. Here it is done once, in line, with the same parts:
 * `PurchaseDto.readIfValid` (the pipe's own fast check), `PurchaseService.purchase`, `sendError` (the
 * filter's answer), and the sold-out fast path first.
 *
 * Only a request whose every earlier check of docs/api.md's order is known to pass is answered here: a
 * verified caller (else 401) and a body `readIfValid` accepts (else 400). Anything else goes on to
 * Nest's route, which words each refusal exactly as before. The one exception to that order is the
 * sold-out answer (docs/api.md, "Buying"): it is given before the rate limits, and counts none.
 */
@Injectable()
export class PurchaseRoute implements OnModuleInit {
  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly purchases: PurchaseService,
    private readonly soldOut: SoldOutFastPath,
    private readonly limits: PurchaseRateLimit,
    private readonly metrics: MetricsService,
  ) {}

  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter.getInstance<FastifyInstance>();
    fastify.addHook('preHandler', (request, reply, done) => {
      if (request.method !== 'POST' || request.routeOptions.url !== PURCHASE_ROUTE) {
        done();
        return;
      }
      // Set by the admission hook only for a valid `Bearer` access token: exactly what the guard admits.
      const user = (request as FastifyRequest & { user?: AuthUser }).user;
      const { id: saleId } = request.params as { id: string };
      const limitsDue = this.limits.isDue(request);
      const purchase = user && validPurchase(request.body);
      if (!user || !purchase) {
        // Nest words the refusal (401, 400…); the rate limits come first (docs/api.md's order).
        if (!user || !limitsDue) done();
        else this.spendLimits(saleId, user, request, reply, () => done());
        return;
      }
      const answer = () => {
        if (this.soldOut.refuses(saleId, user.id, purchase)) {
          // docs/api.md's sold-out exception: a final answer that changes nothing counts no rate limit.
          this.soldOut.answer(reply);
          return;
        }
        // The reservation script counts the limits itself (one Redis command for the whole purchase).
        this.purchases.purchase(user, saleId, purchase.token, purchase.quantity ?? 1, limitsDue).then(
          (accepted) => void reply.status(purchaseStatus(accepted)).send(accepted),
          (error: unknown) => sendError(request, reply, error),
        );
      };
      const learning = this.soldOut.learning(saleId);
      if (learning) void learning.then(answer);
      else answer();
    });
  }

  private spendLimits(
    saleId: string,
    user: AuthUser,
    request: FastifyRequest,
    reply: FastifyReply,
    then: () => void,
  ): void {
    this.limits.consume(saleId, user.id).then(then, (error: unknown) => {
      this.metrics.countRefusedPurchase(error);
      sendError(request, reply, error);
    });
  }
}

function validPurchase(body: unknown): PurchaseDto | undefined {
  if (body === null || typeof body !== 'object' || Array.isArray(body) || body instanceof UnreadableBody) {
    return undefined;
  }
  return PurchaseDto.readIfValid(body as Record<string, unknown>);
}
