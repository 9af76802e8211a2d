import { type ArgumentsHost, Catch, type ExceptionFilter, Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { toErrorResponse } from './error-body';

const logger = new Logger('ErrorFilter');

/**
 * Replies that carry an answer of the contract (docs/api.md) rather than a fault: a refusal, or a `503`
 * the contract calls correct (`retry-after`: nothing was done, try again). The access line of such a
 * reply is not an error line (ops/logging.ts); a 5xx not marked here is a fault.
 */
const contractAnswers = new WeakSet<FastifyReply>();

/** Whether `reply` was answered with an error the contract expects (see `contractAnswers`). */
export function isContractAnswer(reply: FastifyReply): boolean {
  return contractAnswers.has(reply);
}

/**
 * Answers `error` the contract's way: its status, `{error: {code, message}}`, `retry-after` when it
 * carries one; an unexpected error is logged with its stack, which never reaches the wire. The one
 * exit of every error, from Nest's filter below or from a route answered before Nest (a Fastify hook).
 */
export function sendError(request: FastifyRequest, reply: FastifyReply, error: unknown): void {
  const { status, body, unexpected, retryAfter } = toErrorResponse(error);
  if (unexpected) {
    logger.error(
      `${request.method} ${request.url} [${request.id}] failed`,
      error instanceof Error ? error.stack : error,
    );
  } else {
    contractAnswers.add(reply);
  }
  if (retryAfter !== undefined) void reply.header('retry-after', String(retryAfter));
  void reply.status(status).send(body);
}

/** The API's single exception filter: every error leaves through `sendError`. */
@Catch()
export class ErrorFilter implements ExceptionFilter {
  catch(error: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    sendError(http.getRequest<FastifyRequest>(), http.getResponse<FastifyReply>(), error);
  }
}
