import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { ErrorCode } from '@flash-sale/domain';
import helmet from '@fastify/helmet';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { toErrorResponse } from '../common/error-body';

/**
 * Security headers on every response (@fastify/helmet). The content security policy is helmet's
 * default, except that sale images may come from any https origin (an admin types their URL) and that
 * plain-http local development must not be told to upgrade every request to https.
 */
export async function installSecurityHeaders(app: NestFastifyApplication): Promise<void> {
  await app.register(helmet, {
    contentSecurityPolicy: {
      directives: { 'img-src': ["'self'", 'data:', 'https:'], 'upgrade-insecure-requests': null },
    },
  });
}

/**
 * Requests Node rejects before Fastify sees them (a 20 KB URL or header block: 431; a timeout: 408;
 * garbage: 400) get the contract's error body and an `x-request-id`, like every other answer.
 */
export function clientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  const message =
    status === 431
      ? 'The request line or headers are too large'
      : status === 408
        ? 'The request took too long to arrive'
        : 'The request is not valid HTTP';
  const body = JSON.stringify({ error: { code: ErrorCode.ValidationFailed, message } });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
        `content-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
        `x-request-id: ${randomUUID()}\r\nconnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}

/**
 * Errors Fastify's router answers itself (a path parameter over `maxParamLength`: 414; a malformed URL
 * component: 400), before any hook: the contract's body and the request id, like every other answer.
 */
export function frameworkErrors(error: Error, request: FastifyRequest, reply: FastifyReply): void {
  const { status, body } = toErrorResponse(error);
  void reply.header('x-request-id', request.id).status(status).send(body);
}
