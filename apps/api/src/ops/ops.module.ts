import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { LoggerModule } from 'nestjs-pino';
import { DependencyHealth } from './dependency-health';
import { HealthController } from './health.controller';
import { nestLoggingParams, RequestLogContext } from './logging';
import { MetricsController } from './metrics.controller';
import { MetricsService } from './metrics.service';

/**
 * Operations: JSON logs with the request id, /health and /health/ready, /metrics. (The OpenAPI page and
 * the queue dashboard are plain Fastify routes: see install-ops.ts.)
 */
@Module({
  imports: [LoggerModule.forRootAsync(nestLoggingParams), TerminusModule.forRoot({ errorLogStyle: 'json' })],
  controllers: [HealthController, MetricsController],
  providers: [MetricsService, DependencyHealth, RequestLogContext],
  exports: [MetricsService],
})
export class OpsModule {}
