import { ConfigError, loadConfig } from '@flash-sale/config';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Logger } from '@nestjs/common';
import { createApiApp } from './app.factory';
import { endWithThePrimary } from './cluster-worker';
import { StartupWarmUp } from './ops/startup-warm-up';

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
  // Then, before /health/ready says ready, the warm-up: the opening crowd meets a warm purchase path.
  // Nothing above awaits, so no request is answered between the listen and the warm-up's start.
  const { address, port } = app.getHttpServer().address() as AddressInfo;
  await app.get(StartupWarmUp).run(loopbackFor(address), port);
}

bootstrap().catch((error: unknown) => {
  console.error(error instanceof ConfigError ? `Configuration error: ${error.message}` : error);
  process.exit(1);
});

/** Where this process reaches its own server: the listening address, or loopback for a wildcard one. */
function loopbackFor(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::') return '::1';
  return host;
}
