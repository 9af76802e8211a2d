import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { LoggerModule } from 'nestjs-pino';
import { AuthModule } from '../auth/auth.module';
import { DependencyHealth } from './dependency-health';
import { HealthController } from './health.controller';
import { nestLoggingParams, RequestLogContext } from './logging';
import { SalesModule } from '../sales/sales.module';
import { StartupWarmUp } from './startup-warm-up';
import { WarmUpSales } from './warm-up-sale';

/**
 * Operations: JSON logs with the request id, /health and /health/ready. (The OpenAPI page and the
 * queue board are plain Fastify routes, for admins: see install-ops.ts.)
 */
@Module({
  imports: [
    LoggerModule.forRootAsync(nestLoggingParams),
    TerminusModule.forRoot({ errorLogStyle: 'json' }),
    AuthModule,
    SalesModule,
  ],
  controllers: [HealthController],
  providers: [DependencyHealth, RequestLogContext, WarmUpSales, StartupWarmUp],
  exports: [StartupWarmUp],
})
export class OpsModule {}
