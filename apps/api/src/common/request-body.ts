import { DomainError, ErrorCode } from '@flash-sale/domain';
import type { FastifyInstance, FastifyRequest } from 'fastify';

/**
 * A body that could not be read (malformed JSON, a content type the API does not speak).
 *
 * Fastify parses bodies before any guard runs, so failing right there would answer 400 to a caller
 * with no token, while API.md answers 401 first. The parser therefore hands this marker on, and the
 * validation pipe, which runs after the guards, turns it into 400 VALIDATION_FAILED.
 */
export class UnreadableBody {
  constructor(readonly reason: string) {}

  toError(): DomainError {
    return new DomainError(ErrorCode.ValidationFailed, this.reason);
  }
}

const RAW_BODY = Symbol('rawBody');

/** The exact bytes of a JSON body, kept for signature checks (payment callbacks). */
export function rawBodyOf(request: FastifyRequest): string | undefined {
  return (request as FastifyRequest & { [RAW_BODY]?: string })[RAW_BODY];
}

/** JSON bodies: empty means "no body" (clients often send the header alone); anything else must parse. */
export function installBodyParsers(fastify: FastifyInstance): void {
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser(
    'application/json',
    { parseAs: 'string' },
    (request: FastifyRequest, body: string | Buffer, done) => {
      const text = body.toString();
      (request as FastifyRequest & { [RAW_BODY]?: string })[RAW_BODY] = text;
      if (text.trim() === '') return done(null, undefined);
      try {
        done(null, JSON.parse(text) as unknown);
      } catch {
        done(null, new UnreadableBody('The request body is not valid JSON'));
      }
    },
  );
  fastify.addContentTypeParser('*', { parseAs: 'string' }, (request: FastifyRequest, _body, done) => {
    done(
      null,
      new UnreadableBody(`Send JSON (Content-Type: application/json), not ${request.headers['content-type']}`),
    );
  });
}
