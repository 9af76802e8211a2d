import { DomainError, ErrorCode } from '@flash-sale/domain';
import type { FastifyInstance, FastifyRequest } from 'fastify';

/**
 * A body that could not be read (malformed JSON, a content type the API does not speak).
 *
 * Fastify parses bodies before any guard runs, so failing right there would answer 400 to a caller
 * with no token, while docs/api.md answers 401 first. The parser therefore hands this marker on, and the
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

/** Keys that name a prototype: refused as unknown fields, never silently dropped or merged. */
const PROTOTYPE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * How deeply `text` nests arrays and objects, counted without parsing: a body like `[[[[…` 3,000 levels
 * deep fits in a few KB and would overflow the stack of the recursive validators downstream. Stops
 * counting once past `max`.
 */
export function nestingDepth(text: string, max: number): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      depth++;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > max) return deepest;
      }
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return deepest;
}

/** The first prototype-naming key anywhere in a parsed body, if any. */
function prototypeKeyIn(value: unknown): string | undefined {
  const pending: unknown[] = [value];
  while (pending.length) {
    const next = pending.pop();
    if (next === null || typeof next !== 'object') continue;
    for (const key of Object.keys(next)) {
      if (PROTOTYPE_KEYS.has(key)) return key;
      pending.push((next as Record<string, unknown>)[key]);
    }
  }
  return undefined;
}

/**
 * JSON bodies: empty means "no body" (clients often send the header alone); anything else must parse,
 * nest at most `maxDepth` levels and carry no prototype keys (`__proto__`, `constructor`, `prototype`).
 */
export function installBodyParsers(fastify: FastifyInstance, maxDepth: number): void {
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser(
    'application/json',
    { parseAs: 'string' },
    (request: FastifyRequest, body: string | Buffer, done) => {
      const text = body.toString();
      (request as FastifyRequest & { [RAW_BODY]?: string })[RAW_BODY] = text;
      if (text.trim() === '') return done(null, undefined);
      if (nestingDepth(text, maxDepth) > maxDepth) {
        return done(null, new UnreadableBody(`The request body nests deeper than ${maxDepth} levels`));
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        return done(null, new UnreadableBody('The request body is not valid JSON'));
      }
      // A cheap text test first: the walk runs only for bodies that mention such a key at all.
      const suspicious = text.includes('__proto__') || text.includes('constructor') || text.includes('prototype');
      const prototypeKey = suspicious ? prototypeKeyIn(parsed) : undefined;
      if (prototypeKey) return done(null, new UnreadableBody(`property ${prototypeKey} should not exist`));
      done(null, parsed);
    },
  );
  fastify.addContentTypeParser('*', { parseAs: 'string' }, (request: FastifyRequest, _body, done) => {
    done(
      null,
      new UnreadableBody(`Send JSON (Content-Type: application/json), not ${request.headers['content-type']}`),
    );
  });
}
