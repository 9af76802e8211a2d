import 'reflect-metadata';
import { ConfigError, loadConfig } from '@flash-sale/config';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Logger as PinoLogger } from 'nestjs-pino';
import { WritePathWarmUp } from './orders/write-path-warm-up';
import { WorkerModule } from './worker.module';

/** The worker: a Nest application context with no HTTP server, consuming BullMQ jobs. */
async function bootstrap(): Promise<void> {
  const config = loadConfig();
  const app = await NestFactory.createApplicationContext(WorkerModule.forRoot(config), { bufferLogs: true });
  app.useLogger(app.get(PinoLogger)); // JSON lines (ops/logging.ts)
  // SIGTERM/SIGINT close the BullMQ worker gracefully: active jobs finish, nothing new is taken.
  app.enableShutdownHooks();
  // Before it says it consumes: the first orders of a sale meet a warm write path.
  await app.get(WritePathWarmUp).run();
  new Logger('Worker').log(`Worker consuming "${config.queue.prefix}" with concurrency ${config.worker.concurrency}`);
}

bootstrap().catch((error: unknown) => {
  console.error(error instanceof ConfigError ? `Configuration error: ${error.message}` : error);
  process.exit(1);
});
