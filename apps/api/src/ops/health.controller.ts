import { hostname } from 'node:os';
import {
  type ArgumentsHost,
  Catch,
  Controller,
  type ExceptionFilter,
  Get,
  ServiceUnavailableException,
  UseFilters,
} from '@nestjs/common';
import { HealthCheck, HealthCheckService, TypeOrmHealthIndicator } from '@nestjs/terminus';
import { ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { CHECK_DEADLINE_MS, DependencyHealth } from './dependency-health';
import { StartupWarmUp } from './startup-warm-up';

/**
 * Terminus reports a failed check as a 503 exception carrying its report; the API's own error filter
 * would turn that into `{error}`. Probes and operators want terminus' report itself.
 */
@Catch(ServiceUnavailableException)
class ReadinessReportFilter implements ExceptionFilter {
  catch(exception: ServiceUnavailableException, host: ArgumentsHost): void {
    void host.switchToHttp().getResponse<FastifyReply>().status(503).send(exception.getResponse());
  }
}

@ApiTags('Operations')
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly mysql: TypeOrmHealthIndicator,
    private readonly dependencies: DependencyHealth,
    private readonly warmUp: StartupWarmUp,
  ) {}

  /**
   * Liveness: the process answers. No dependency is consulted, so an outage never gets the API
   * restarted. It names the process that answered: with several behind one port or one balancer, an
   * operator sees the requests spread.
   */
  @Get()
  live(): { status: 'ok'; host: string; pid: number } {
    return { status: 'ok', host: hostname(), pid: process.pid };
  }

  /**
   * Readiness: the startup warm-up has run, and Redis, MySQL and the queue all answer; otherwise 503
   * with the failing ones.
   */
  @Get('ready')
  @HealthCheck()
  @UseFilters(ReadinessReportFilter)
  ready() {
    return this.health.check([
      () => this.dependencies.warmedUp('warm-up', this.warmUp.done),
      () => this.dependencies.redisPing('redis'),
      () => this.mysql.pingCheck('mysql', { timeout: CHECK_DEADLINE_MS }),
      () => this.dependencies.queuesReachable('queue'),
    ]);
  }
}
