import { ConfigError, loadConfig } from '@flash-sale/config';
import path from 'node:path';
import { Logger } from '@nestjs/common';
import { createApiApp } from './app.factory';

async function bootstrap(): Promise<void> {
  const config = loadConfig();
  // The storefront's build sits beside the API's in the repository (apps/web/dist); STOREFRONT_DIR overrides.
  const app = await createApiApp(config, { storefrontDir: path.resolve(__dirname, '../../web/dist') });
  await app.listen({ port: config.http.port, host: config.http.host });
  const logger = new Logger('Api');
  logger.log(
    `API listening on http://localhost:${config.http.port}/api, storefront on http://localhost:${config.http.port}/`,
  );
  const loopback = /^(127\.|::1$|localhost$)/.test(config.http.host);
  if (!loopback && !config.production) {
    logger.warn(
      `Listening on ${config.http.host} in development mode: unset secrets have public development values (set JWT_SECRET, ADMIN_PASSWORD, PAYMENT_WEBHOOK_SECRET)`,
    );
  }
  if (config.auth.adminPasswordIsDefault) {
    logger.warn(`ADMIN_PASSWORD is not set: the development admin password is "${config.auth.adminPassword}"`);
  }
}

bootstrap().catch((error: unknown) => {
  console.error(error instanceof ConfigError ? `Configuration error: ${error.message}` : error);
  process.exit(1);
});
