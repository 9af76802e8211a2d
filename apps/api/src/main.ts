import { ConfigError, loadConfig } from '@flash-sale/config';
import path from 'node:path';
import { Logger } from '@nestjs/common';
import { createApiApp } from './app.factory';
import { endWithThePrimary } from './cluster-worker';

async function bootstrap(): Promise<void> {
  endWithThePrimary();
  const config = loadConfig();
  // The storefront's build sits beside the API's in the repository (apps/web/dist); STOREFRONT_DIR overrides.
  const app = await createApiApp(config, { storefrontDir: path.resolve(__dirname, '../../web/dist') });
  await app.listen({ port: config.http.port, host: config.http.host });
  const logger = new Logger('Api');
  logger.log(
    `API listening on http://localhost:${config.http.port}/api, storefront on http://localhost:${config.http.port}/`,
  );
  if (config.developmentSecretsNotice) {
    const loopback = /^(127\.|::1$|localhost$)/.test(config.http.host);
    const reach = loopback ? '' : ` — and it listens on ${config.http.host}, reachable beyond this machine`;
    logger.warn(`${config.developmentSecretsNotice}${reach}`);
  }
}

bootstrap().catch((error: unknown) => {
  console.error(error instanceof ConfigError ? `Configuration error: ${error.message}` : error);
  process.exit(1);
});
