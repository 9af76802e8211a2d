import { Controller, Get, Res } from '@nestjs/common';
import { ApiProduces, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { MetricsService } from './metrics.service';

@ApiTags('Operations')
@Controller('metrics')
export class MetricsController {
  constructor(private readonly metrics: MetricsService) {}

  /** Prometheus text format. Like /health, meant for the internal network: it carries no sale data beyond ids. */
  @Get()
  @ApiProduces('text/plain')
  async scrape(@Res({ passthrough: true }) reply: FastifyReply): Promise<string> {
    const body = await this.metrics.render();
    void reply.type(this.metrics.contentType);
    return body;
  }
}
