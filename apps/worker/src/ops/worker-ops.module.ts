import type { AppConfig } from '@flash-sale/config';
import { type DynamicModule, Module } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import { workerLoggerParams } from './logging';
import { WorkerMetricsServer } from './metrics-server';
import { WorkerMetrics } from './worker-metrics';

/** The worker's operations: pino logs (main.ts installs them) and its metrics endpoint. */
@Module({})
export class WorkerOpsModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: WorkerOpsModule,
      imports: [LoggerModule.forRoot(workerLoggerParams(config.ops))],
      providers: [
        WorkerMetrics,
        {
          provide: WorkerMetricsServer,
          inject: [WorkerMetrics],
          useFactory: (metrics: WorkerMetrics) =>
            new WorkerMetricsServer(metrics, config.ops.workerMetricsPort, config.http.host),
        },
      ],
      exports: [WorkerMetrics, WorkerMetricsServer],
    };
  }
}
