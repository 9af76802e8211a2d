import { type ArgumentsHost, Catch, type ExceptionFilter, Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { retryAfterOf } from '../protection/retry-later.error';
import { toErrorResponse } from './error-body';

/** The API's single exception filter: every error leaves through `toErrorResponse`. */
@Catch()
export class ErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('ErrorFilter');

  catch(error: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    const { status, body, unexpected } = toErrorResponse(error);
    if (unexpected) {
      this.logger.error(
        `${request.method} ${request.url} [${request.id}] failed`,
        error instanceof Error ? error.stack : error,
      );
    }
    const retryAfter = retryAfterOf(error);
    if (retryAfter !== undefined) void reply.header('retry-after', String(retryAfter));
    void reply.status(status).send(body);
  }
}
