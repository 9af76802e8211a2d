import type { AppConfig } from '@flash-sale/config';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createApiApp } from '../../apps/api/src/app.factory';
import { WorkerModule } from '../../apps/worker/src/worker.module';
import { ApiClient } from './api-client';

export interface RunningStack {
  api: NestFastifyApplication;
  worker?: INestApplicationContext;
  client: ApiClient;
  close(): Promise<void>;
}

/** The real API on a free port and, unless told otherwise, a real worker: both in this process. */
export async function startStack(config: AppConfig, options: { worker?: boolean } = {}): Promise<RunningStack> {
  const api = await createApiApp(config, { logger: false });
  await api.listen({ port: 0, host: '127.0.0.1' });
  const address = api.getHttpServer().address();
  if (!address || typeof address === 'string') throw new Error('API did not bind a TCP port');
  const worker =
    options.worker === false
      ? undefined
      : await NestFactory.createApplicationContext(WorkerModule.forRoot(config), { logger: false });
  const client = new ApiClient(`http://127.0.0.1:${address.port}`);
  return {
    api,
    worker,
    client,
    async close() {
      await client.close();
      await worker?.close();
      await api.close();
    },
  };
}
