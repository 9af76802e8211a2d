import type { AppConfig } from '@flash-sale/config';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createApiApp } from '../../apps/api/src/app.factory';
import { WorkerModule } from '../../apps/worker/src/worker.module';
import { DataSource } from 'typeorm';
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
      // Side by side: a worker whose Redis is gone may never finish closing (BullMQ waits for its
      // connection), and the API must not stay open behind it — its server and pools would keep the test
      // process alive after the file's verdict.
      await Promise.all([api.close(), worker && closeWorker(worker)]);
    },
  };
}

/** How long a worker gets to close before its MySQL pool is closed under it. */
const WORKER_CLOSE_MS = 5_000;

/**
 * Closes the worker; one that cannot finish (its Redis was killed, BullMQ waits for it) still gets its
 * MySQL pool closed, whose sockets would otherwise outlive the test file.
 */
async function closeWorker(worker: INestApplicationContext): Promise<void> {
  const closed = worker.close().then(() => true);
  const timedOut = new Promise<false>((resolve) => setTimeout(() => resolve(false), WORKER_CLOSE_MS).unref());
  if (await Promise.race([closed, timedOut])) return;
  await worker
    .get(DataSource, { strict: false })
    .destroy()
    .catch(() => undefined);
}
