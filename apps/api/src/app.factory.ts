import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import type { AppConfig } from '@flash-sale/config';
import { REQUEST_LIMITS } from '@flash-sale/contract';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { Logger } from 'nestjs-pino';
import { AppModule } from './app.module';
import { decorateRequests } from './common/auth-user';
import { ErrorFilter } from './common/error.filter';
import { installBodyParsers } from './common/request-body';
import { createValidationPipe } from './common/validation';
import { installOpsRoutes } from './ops/install-ops';
import { fastifyLogging } from './ops/logging';
import { clientErrorHandler, frameworkErrors, installSecurityHeaders } from './protection/safe-defaults';
import { installStorefront } from './web/storefront';

const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

/** Echo a sane caller-supplied `x-request-id`, else mint one. */
function requestId(request: { headers: Record<string, string | string[] | undefined> }): string {
  const given = request.headers['x-request-id'];
  return typeof given === 'string' && REQUEST_ID_PATTERN.test(given) ? given : randomUUID();
}

export async function createApiApp(
  config: AppConfig,
  options: { logger?: false; storefrontDir?: string } = {},
): Promise<NestFastifyApplication> {
  // Logs are pino's JSON lines (ops/logging.ts); `logger: false` (the tests) silences them all.
  const quiet = options.logger === false;
  const adapter = new FastifyAdapter({
    bodyLimit: REQUEST_LIMITS.maxBodyBytes,
    genReqId: requestId,
    clientErrorHandler,
    frameworkErrors,
    // Keep-alive connections from load generators and browsers live longer than Node's default.
    keepAliveTimeout: 65_000,
    // Behind a load balancer: believe its X-Forwarded-For/-Proto (client IP for rate limits, https), no one else's.
    trustProxy: config.http.trustProxy.length > 0 ? config.http.trustProxy : false,
    ...fastifyLogging(config.ops, quiet),
  });
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRoot(config), adapter, {
    logger: quiet ? false : undefined,
    bufferLogs: !quiet,
    // Our own parsers (common/request-body.ts) replace Nest's, for the error contract.
    bodyParser: false,
  });
  if (!quiet) app.useLogger(app.get(Logger));
  const fastify = app.getHttpAdapter().getInstance();
  decorateRequests(fastify);
  installBodyParsers(fastify, config.protection.maxBodyDepth);
  installSecurityHeaders(app);
  // A callback hook, not an async one: no promise and microtask per request for a one-line job.
  fastify.addHook('onRequest', (request, reply, done) => {
    void reply.header('x-request-id', request.id);
    done();
  });
  app.setGlobalPrefix('api', { exclude: ['health', 'health/ready', 'metrics', 'docs'] });
  app.useGlobalPipes(createValidationPipe());
  app.useGlobalFilters(new ErrorFilter());
  await installOpsRoutes(app, config);
  const storefrontDir = config.web.storefrontDir ?? options.storefrontDir;
  if (storefrontDir && !(await installStorefront(app, storefrontDir)) && !quiet) {
    app
      .get(Logger)
      .warn(`No storefront build in ${storefrontDir} (npm run build -w @flash-sale/web); serving the API only`);
  }
  app.enableShutdownHooks();
  return app;
}
