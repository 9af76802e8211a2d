import { type AppConfig, InjectAppConfig, METRICS_CHALLENGE, metricsScrapeRefusal } from '@flash-sale/config';
import { DomainError, ErrorCode } from '@flash-sale/domain';
import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** `/metrics` answers only whom `METRICS_TOKEN` allows (libs/config metrics-access.ts); others get 401. */
@Injectable()
export class MetricsGuard implements CanActivate {
  constructor(@InjectAppConfig() private readonly config: AppConfig) {}

  canActivate(context: ExecutionContext): boolean {
    const http = context.switchToHttp();
    const refusal = metricsScrapeRefusal(
      this.config.ops.metrics,
      http.getRequest<FastifyRequest>().headers.authorization,
    );
    if (refusal === undefined) return true;
    void http.getResponse<FastifyReply>().header('www-authenticate', METRICS_CHALLENGE);
    throw new DomainError(ErrorCode.Unauthenticated, refusal);
  }
}
