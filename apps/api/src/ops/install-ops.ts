import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { installDocs } from './docs';
import { installQueueBoard } from './queue-board';

/** The operations pages that live beside Nest's router, as Fastify routes: /docs and /admin/queues. */
export async function installOpsRoutes(app: NestFastifyApplication): Promise<void> {
  installDocs(app);
  await installQueueBoard(app);
}
