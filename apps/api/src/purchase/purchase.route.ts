import { HttpStatus, Injectable, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { OperationObject } from '@nestjs/swagger';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AuthGuard } from '../auth/auth.guard';
import { sendError } from '../common/error.filter';
import { MetricsService } from '../metrics/metrics.service';
import { LoadShedder } from '../protection/load-shedder';
import { PURCHASE_BODY_SCHEMA, type PurchaseOrder, readPurchaseBody } from './purchase-body';
import { PurchaseService } from './purchase.service';
import type { EarlyAnswer, PurchaseAccepted } from './stock-strategy';
import { StockStrategies } from './strategies/stock-strategies';

/** The purchase route as Fastify knows it. */
export const PURCHASE_ROUTE = '/api/sales/:id/purchase';

/** The same route in the OpenAPI document, with its body schema and answers. */
export const PURCHASE_OPENAPI = {
  path: '/api/sales/{id}/purchase',
  bodySchemaName: 'PurchaseRequest',
  bodySchema: PURCHASE_BODY_SCHEMA,
  operation: {
    operationId: 'PurchaseRoute_purchase',
    summary: 'Buy with a submit token',
    description: 'Needs a guest or admin token; without one, 401.',
    tags: ['Purchase'],
    security: [{ bearer: [] }],
    parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
    requestBody: {
      required: true,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/PurchaseRequest' } } },
    },
    responses: {
      '202': {
        description:
          'Reserved in Redis: `{"orderNo", "status": "QUEUED"}`; the worker writes it. A replay: the order\'s status now',
      },
      '201': {
        description:
          'A MySQL-only strategy wrote it: `{"orderNo", "status": "PENDING_PAYMENT"}`. A replay: the order\'s status now',
      },
    },
  } satisfies OperationObject,
};

/**
 * `POST /api/sales/:id/purchase`, the hot path, served by Fastify directly: what Nest would add here
 * (guard, pipe, parameter decorators, interceptors, filter) is the same work done through several
 * layers of promises per request. It answers in docs/api.md's order:
 *   1. load shedding: 503 + retry-after, before anything else costs a thing (`onRequest`);
 *   2. the access token: 401 (`onRequest`, before the body is even parsed);
 *   3. the rate limits: 429 (PurchaseService spends them, PurchaseRateLimits says when);
 *   4. the body: 400; then the sale and the purchase rules (404, 409, 410, 403…), or 202 / 201.
 * The one exception to that order is a strategy's early answer, such as the local sold-out answer
 * (docs/api.md, "Buying"): given once the caller and the body are known to be valid, before the rate
 * limits, and counting none.
 */
@Injectable()
export class PurchaseRoute implements OnModuleInit {
  private earlyAnswers: readonly EarlyAnswer[] = [];

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly auth: AuthGuard,
    private readonly shedder: LoadShedder,
    private readonly purchases: PurchaseService,
    private readonly strategies: StockStrategies,
    private readonly metrics: MetricsService,
  ) {}

  onModuleInit(): void {
    this.earlyAnswers = this.strategies.earlyAnswers();
    const fastify = this.adapterHost.httpAdapter.getInstance<FastifyInstance>();
    fastify.route<{ Params: { id: string } }>({
      method: 'POST',
      url: PURCHASE_ROUTE,
      // A callback hook, not an async one: no promise per request for what is decided in line.
      onRequest: (request, reply, done) => {
        const shedReason = this.shedder.reason();
        if (shedReason) {
          this.metrics.countShedPurchase(shedReason);
          this.refuse(request, reply, this.shedder.refusal(shedReason));
          return;
        }
        try {
          this.auth.callerOf(request);
        } catch (error) {
          this.refuse(request, reply, error);
          return;
        }
        done();
      },
      handler: async (request, reply) => {
        try {
          const accepted = await this.answer(request.user!.id, request.params.id, request.body, reply);
          if (accepted)
            void reply.status(purchaseStatus(accepted)).send({ orderNo: accepted.orderNo, status: accepted.status });
        } catch (error) {
          this.refuse(request, reply, error);
        }
        return reply;
      },
    });
  }

  /** The purchase's answer; `undefined` when a strategy's early answer has been given already. */
  private async answer(
    userId: string,
    saleId: string,
    body: unknown,
    reply: FastifyReply,
  ): Promise<PurchaseAccepted | undefined> {
    let order: PurchaseOrder;
    try {
      order = readPurchaseBody(body);
    } catch (error) {
      return this.purchases.refuseBody(userId, saleId, error);
    }
    // Synchronous on a live sale: a live purchase waits for nothing here.
    // An indexed loop: no iterator allocated per purchase.
    for (let i = 0; i < this.earlyAnswers.length; i++) {
      const early = this.earlyAnswers[i]!;
      const applies = early.applies(saleId, userId, order);
      if (applies === true || (applies !== false && (await applies))) {
        early.give(reply);
        return undefined;
      }
    }
    return this.purchases.purchase(userId, saleId, order);
  }

  /** Every refusal of the route leaves here: counted once, answered the contract's way. */
  private refuse(request: FastifyRequest, reply: FastifyReply, error: unknown): void {
    this.metrics.countRefusedPurchase(error);
    sendError(request, reply, error);
  }
}

/** 202 when Redis reserved the order (the worker writes it); 201 when MySQL wrote it at once. A replay says how its order was made. */
function purchaseStatus(accepted: PurchaseAccepted): HttpStatus {
  return accepted.made === 'reserved' ? HttpStatus.ACCEPTED : HttpStatus.CREATED;
}
