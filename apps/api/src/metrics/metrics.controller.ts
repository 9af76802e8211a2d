import { Controller, Get, Res, UseGuards } from '@nestjs/common';
import { ApiProduces, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { MetricsGuard } from './metrics.guard';
import { MetricsService } from './metrics.service';

@ApiTags('Operations')
@Controller('metrics')
export class MetricsController {
  constructor(private readonly metrics: MetricsService) {}

  /**
   * Prometheus text format, for the internal network: it carries no sale data beyond ids, but tells
   * load and failures. In production only for the bearer of METRICS_TOKEN (MetricsGuard).
   */
  @Get()
  @UseGuards(MetricsGuard)
  @ApiProduces('text/plain')
  async scrape(@Res({ passthrough: true }) reply: FastifyReply): Promise<string> {
    const body = await this.metrics.render();
    void reply.type(this.metrics.contentType);
    return body;
  }
}
