import { randomUUID } from 'node:crypto';
import { type IncomingMessage, type ServerResponse, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { ErrorCode } from '@flash-sale/domain';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import helmet from 'helmet';
import { toErrorResponse } from '../common/error-body';

/**
 * The security headers helmet sets: helmet's defaults, except that the content security policy lets
 * sale images come from any https origin (an admin types their URL) and does not tell plain-http local
 * development to upgrade every request to https.
 *
 * Nothing in them depends on the request (no CSP nonces), so helmet computes them once, here, and
 * every response gets the same list. @fastify/helmet would build helmet's middleware anew and run it
 * (two hooks, one of them async) on every request for the same result.
 */
export function securityHeaders(): Readonly<Record<string, string>> {
  const headers: Record<string, string> = {};
  const collector = {
    setHeader: (name: string, value: string | number) => {
      headers[name.toLowerCase()] = String(value);
    },
    removeHeader: (name: string) => {
      delete headers[name.toLowerCase()];
    },
  };
  const middleware = helmet({
    contentSecurityPolicy: {
      directives: { 'img-src': ["'self'", 'data:', 'https:'], 'upgrade-insecure-requests': null },
    },
  });
  middleware({} as IncomingMessage, collector as unknown as ServerResponse, (error?: unknown) => {
    if (error) throw error;
  });
  return Object.freeze(headers);
}

/** Security headers on every response, 404s and refusals included. */
export function installSecurityHeaders(app: NestFastifyApplication): void {
  const headers = securityHeaders();
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onRequest', (_request, reply, done) => {
      void reply.headers(headers);
      done();
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
