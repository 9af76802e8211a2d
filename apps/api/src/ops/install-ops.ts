import type { AppConfig } from '@flash-sale/config';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { installDocs } from './docs';
import { installQueueBoard } from './queue-board';

/**
 * The operations pages that live beside Nest's router, as Fastify routes: /docs (unless DOCS_ENABLED
 * turns it off, as production does by default: the full route map helps an attacker more than a
 * customer) and /admin/queues.
 */
export async function installOpsRoutes(app: NestFastifyApplication, config: AppConfig): Promise<void> {
  if (config.ops.docsEnabled) installDocs(app);
  // In production the admin's cookie travels over HTTPS only, whatever the proxy in front says.
  await installQueueBoard(app, { secureCookie: config.production });
}
