import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import type { AppConfig } from '@flash-sale/config';
import { DomainError, ErrorCode } from '@flash-sale/domain';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppModule } from './app.module';
import { toErrorResponse } from './common/error-body';
import { ErrorFilter } from './common/error.filter';
import { createValidationPipe } from './common/validation';

const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

/** Echo a sane caller-supplied `x-request-id`, else mint one. */
function requestId(request: { headers: Record<string, string | string[] | undefined> }): string {
  const given = request.headers['x-request-id'];
  return typeof given === 'string' && REQUEST_ID_PATTERN.test(given) ? given : randomUUID();
}

/**
 * JSON bodies: an empty body is "no body" (clients often send Content-Type without one on
 * POST /tokens), malformed JSON is a 400 VALIDATION_FAILED.
 */
function installJsonParser(fastify: FastifyInstance): void {
  fastify.removeContentTypeParser('application/json');
  fastify.addContentTypeParser(
    'application/json',
    { parseAs: 'string' },
    (_request: FastifyRequest, body: string | Buffer, done) => {
      const text = body.toString();
      if (text.trim() === '') return done(null, undefined);
      try {
        done(null, JSON.parse(text) as unknown);
      } catch {
        done(new DomainError(ErrorCode.ValidationFailed, 'The request body is not valid JSON'), undefined);
      }
    },
  );
}

export async function createApiApp(config: AppConfig): Promise<NestFastifyApplication> {
  const adapter = new FastifyAdapter({
    bodyLimit: 64 * 1024,
    genReqId: requestId,
    // Keep-alive connections from load generators and browsers live longer than Node's default.
    keepAliveTimeout: 65_000,
  });
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRoot(config), adapter, {
    logger: ['error', 'warn', 'log'],
    bufferLogs: false,
    // Our own JSON parser (installJsonParser) replaces Nest's, for the error contract.
    bodyParser: false,
  });
  const fastify = app.getHttpAdapter().getInstance();
  installJsonParser(fastify);
  fastify.addHook('onRequest', async (request, reply) => {
    void reply.header('x-request-id', request.id);
  });
  // Errors raised before a route runs (body parsing, size limits) never reach Nest's filter.
  fastify.setErrorHandler((error, _request, reply) => {
    const { status, body } = toErrorResponse(error);
    void reply.status(status).send(body);
  });
  app.setGlobalPrefix('api', { exclude: ['health', 'health/ready', 'metrics', 'docs'] });
  app.useGlobalPipes(createValidationPipe());
  app.useGlobalFilters(new ErrorFilter());
  app.enableShutdownHooks();
  return app;
}
