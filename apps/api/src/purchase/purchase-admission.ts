import { Injectable, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AuthUser } from '../common/auth-user';
import { AuthGuard } from '../auth/auth.guard';
import { sendError } from '../common/error.filter';
import { MetricsService } from '../metrics/metrics.service';
import { PURCHASE_ROUTE } from './purchase-route';
import { LoadShedder } from '../protection/load-shedder';
import { PurchaseRateLimit } from '../protection/purchase-rate-limit';

/** Only a well-formed sale id gets a per-sale counter; anything else is a 404 later and costs no key. */
const SALE_ID_PATTERN = /^[1-9][0-9]{0,18}$/;

/**
 * The door of the purchase route: load shedding, then — for a caller with a valid access token — the
 * per-user and per-sale rate limits are due. It is a Fastify `onRequest` hook, so it runs before the
 * body is parsed, before the purchase route's `preHandler` and before Nest. It marks the limits due
 * rather than counting them: the purchase route counts them before any answer but a 401 (docs/api.md's
 * order: 401, then 429, then everything else), inside the reservation script when the purchase gets
 * that far, so a live purchase costs one Redis command in all. A request without a valid token goes on
 * untouched and the guard answers 401; a verified caller is left on the request (`request.user`) so
 * that the guard and the purchase route (purchase/purchase-route.ts) do not verify the token again. A
 * shed purchase costs no Redis command at all.
 */
@Injectable()
export class PurchaseAdmission implements OnModuleInit {
  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly auth: AuthGuard,
    private readonly limits: PurchaseRateLimit,
    private readonly shedder: LoadShedder,
    private readonly metrics: MetricsService,
  ) {}

  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter.getInstance<FastifyInstance>();
    fastify.addHook('onRequest', (request, reply, done) => {
      if (request.method !== 'POST' || request.routeOptions.url !== PURCHASE_ROUTE) {
        done();
        return;
      }
      const shedReason = this.shedder.reason();
      if (shedReason) {
        this.metrics.countShedPurchase(shedReason);
        this.refuse(request, reply, this.shedder.refusal(shedReason));
        return;
      }
      const user = this.verifiedUser(request);
      const { id: saleId } = request.params as { id?: string };
      // No user: the guard answers 401. A malformed sale id is a 404 later; it gets no counter (and an
      // attacker no key of their choosing).
      if (!user || !saleId || !SALE_ID_PATTERN.test(saleId)) {
        done();
        return;
      }
      // Counted by the purchase route: in the reservation script itself when the purchase gets that far.
      this.limits.markDue(request);
      done();
    });
  }

  private verifiedUser(request: FastifyRequest): AuthUser | undefined {
    const authorization = request.headers.authorization;
    if (!authorization?.startsWith('Bearer ')) return undefined;
    try {
      const user = this.auth.userOf(authorization.slice('Bearer '.length).trim());
      (request as FastifyRequest & { user?: AuthUser }).user = user;
      return user;
    } catch {
      return undefined;
    }
  }

  private refuse(request: FastifyRequest, reply: FastifyReply, error: unknown): void {
    this.metrics.countRefusedPurchase(error);
    sendError(request, reply, error);
  }
}
