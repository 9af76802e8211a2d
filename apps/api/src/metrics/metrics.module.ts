import { Module } from '@nestjs/common';
import { MetricsController } from './metrics.controller';
import { MetricsService } from './metrics.service';
import { ScrapedGauges } from './scraped-gauges';

/** Prometheus metrics: /metrics, and the counters the purchase path and payments record into. */
@Module({
  controllers: [MetricsController],
  providers: [MetricsService, ScrapedGauges],
  exports: [MetricsService],
})
export class MetricsModule {}
