import { type AppConfig, APP_CONFIG } from '@flash-sale/config';
import { Module } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import { workerLoggerParams } from './logging';
import { WorkerMetricsServer } from './metrics-server';
import { WorkerMetrics } from './worker-metrics';

/** The worker's operations: pino logs (main.ts installs them), its metrics and their endpoint. */
@Module({
  imports: [
    LoggerModule.forRootAsync({
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => workerLoggerParams(config.ops),
    }),
  ],
  providers: [
    WorkerMetrics,
    {
      provide: WorkerMetricsServer,
      inject: [WorkerMetrics, APP_CONFIG],
      useFactory: (metrics: WorkerMetrics, config: AppConfig) =>
        new WorkerMetricsServer(metrics, config.ops.workerMetricsPort, config.http.host, config.ops.metrics),
    },
  ],
  exports: [WorkerMetrics],
})
export class WorkerOpsModule {}
