import type { AppConfig } from '@flash-sale/config';
import { Injectable, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
} from 'fastify';
import type { LoggerModuleAsyncParams } from 'nestjs-pino';
// nestjs-pino's request-scoped store (not re-exported from its index): PinoLogger reads it.
import { Store, storage } from 'nestjs-pino/storage';
import { pino, type Logger, type LoggerOptions } from 'pino';
import { isContractAnswer } from '../common/error.filter';
import { PURCHASE_ROUTE } from '../purchase/purchase.route';
import { WAITING_ROOM_ROUTE } from '../waiting-room/waiting-room.controller';

/**
 * The routes a crowd floods (the purchase, the waiting room's joins and polls): their ordinary answers are
 * sampled, being counted anyway (`flash_sale_purchases_total`, `flash_sale_waiting_room_answers_total`).
 */
const FLOOD_ROUTES: ReadonlySet<string> = new Set([PURCHASE_ROUTE, WAITING_ROOM_ROUTE]);

/** Probes and scrapers call these every few seconds: a log line each would drown the rest. */
const UNLOGGED_PATHS = /^\/(health|metrics)([/?]|$)/;

/** LOG_PRETTY=1: one readable line per entry, e.g. `12:00:00.000 INFO: [api RedisReservation] …`. */
const PRETTY_OPTIONS = {
  singleLine: true,
  translateTime: 'SYS:HH:MM:ss.l',
  ignore: 'pid,hostname,service,context',
  messageFormat: '[{service}{if context} {context}{end}] {msg}',
};

/** The dashboard login carries a token in its query string: it must not reach the logs. */
function withoutSecrets(url: string): string {
  return url.includes('token=') ? url.replace(/([?&]token=)[^&]*/g, '$1[redacted]') : url;
}

/**
 * How Fastify's request and reply appear in a log line — in the access line below and in any line of
 * Fastify's own that names them. They replace Fastify's default serializers, which read more of the
 * request (host, port, `accept-version`) than a line shows.
 */
const HTTP_SERIALIZERS = {
  req: (request: FastifyRequest) => ({
    method: request.method,
    url: withoutSecrets(request.url),
    remoteAddress: request.ip,
  }),
  res: (reply: FastifyReply) => ({ statusCode: reply.statusCode }),
};

/**
 * Log lines are written to stdout in chunks of about this many bytes, or every FLUSH_EVERY_MS: one
 * write per request (the access line) was a tenth of the API's CPU under load. pino flushes what is
 * left when the process exits; a SIGKILL can lose the last FLUSH_EVERY_MS of lines.
 */
const WRITE_CHUNK_BYTES = 4096;
const FLUSH_EVERY_MS = 250;

function bufferedStdout(): ReturnType<typeof pino.destination> {
  const destination = pino.destination({ dest: 1, minLength: WRITE_CHUNK_BYTES, sync: false });
  setInterval(() => destination.flush(), FLUSH_EVERY_MS).unref();
  return destination;
}

/** JSON lines on stdout (pino-pretty when LOG_PRETTY=1): the one root logger of the process. */
export function createRootLogger(ops: AppConfig['ops'], service: string): Logger {
  const pretty = ops.logPretty && ops.logLevel !== 'silent';
  const options: LoggerOptions = {
    level: ops.logLevel,
    formatters: { level: (label: string) => ({ level: label }) },
    timestamp: pino.stdTimeFunctions.isoTime,
    base: { service, pid: process.pid },
    serializers: HTTP_SERIALIZERS,
  };
  return pretty
    ? pino({ ...options, transport: { target: 'pino-pretty', options: PRETTY_OPTIONS } })
    : pino(options, bufferedStdout());
}

/**
 * One line per request, when it completes, written by Fastify's own per-request logger (labelled
 * `reqId`). Fastify's logging is much cheaper per request than a pino-http middleware, which
 * measurably slowed the purchase path. The request and reply go to pino as they are: its serializers
 * (above) pick the fields, once.
 *
 * The line is an `error` for a fault only: a 5xx the contract does not expect (a `500`, a dependency
 * down) or a failed response. A refusal the contract calls correct — `409`, `410`, any 4xx, and a `503` +
 * `retry-after` such as db-optimistic's "retries ran out, try again" — is an `info` line: in a flash sale
 * they are the normal answers, and `npm start`'s terminal shows only warnings and errors.
 *
 * The answers below 500 of the purchase route and of the waiting room's queue route are sampled
 * (PURCHASE_ACCESS_LOG_PERCENT, 1 % by default): in a flash sale they are a flood of identical lines,
 * counted anyway (FLOOD_ROUTES).
 * Every other request, every 5xx and error, and every request that brought its own `x-request-id` (someone
 * is tracing it) keep their line; every response carries its `x-request-id` and every line written while
 * it is handled carries it as `reqId`.
 */
export class AccessLog extends LogController {
  /** Log one answer of a flood route in this many; 0: none. */
  private readonly purchaseEvery: number;
  private purchaseAnswers = 0;

  constructor(purchaseAccessLogPercent: number) {
    super({ requestIdLogLabel: 'reqId', disableRequestLogging: (request) => UNLOGGED_PATHS.test(request.url) });
    this.purchaseEvery = purchaseAccessLogPercent === 0 ? 0 : Math.round(100 / purchaseAccessLogPercent);
  }

  override incomingRequest(): void {
    // Only the completion line: it has everything the first one would.
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (this.isLogDisabled(request)) return;
    const serverError = reply.statusCode >= 500;
    if (!error && !serverError && this.sampledOut(request)) return;
    const responseTime = Math.round(reply.elapsedTime * 10) / 10;
    if (error || (serverError && !isContractAnswer(reply))) {
      reply.log.error({ req: request, res: reply, responseTime, err: error }, 'request completed');
    } else {
      reply.log.info({ req: request, res: reply, responseTime }, 'request completed');
    }
  }

  private sampledOut(request: FastifyRequest): boolean {
    if (!FLOOD_ROUTES.has(request.routeOptions.url ?? '') || request.headers['x-request-id'] === request.id)
      return false;
    if (this.purchaseEvery === 0) return true;
    this.purchaseAnswers = (this.purchaseAnswers + 1) % this.purchaseEvery;
    return this.purchaseAnswers !== 0;
  }
}

/**
 * The API's logging, Fastify side: pino as Fastify's logger, with the request id Fastify gives each
 * request (the caller's sane `x-request-id`, else a fresh UUID — see app.factory.ts). None when quiet.
 */
export function fastifyLogging(ops: AppConfig['ops'], quiet: boolean) {
  return quiet
    ? {}
    : { loggerInstance: createRootLogger(ops, 'api'), logController: new AccessLog(ops.purchaseAccessLogPercent) };
}

/**
 * The API's logging, Nest side: nestjs-pino is Nest's logger (main's `app.useLogger`), reusing Fastify's
 * pino (`useExisting`). Each request's logger is bound to the request by `RequestLogContext` below, so
 * every line written while a request is handled — by any service — carries that request's `reqId` too.
 */
export const nestLoggingParams: LoggerModuleAsyncParams = {
  inject: [HttpAdapterHost],
  useFactory: (adapterHost: HttpAdapterHost) => ({
    useExisting: true,
    // Outside requests (boot, shutdown, jobs), Nest's lines go to Fastify's root logger.
    pinoHttp: { logger: adapterHost.httpAdapter.getInstance<{ log: FastifyBaseLogger }>().log as Logger },
    // No nestjs-pino middleware: RequestLogContext does its one job from a Fastify hook.
    forRoutes: [],
  }),
};

/**
 * Binds each request's logger (Fastify's child logger, labelled with its `reqId`) to everything the
 * request runs, where nestjs-pino's `PinoLogger` looks for it: its AsyncLocalStorage store.
 *
 * nestjs-pino's own middleware does exactly this, but a Nest middleware on Fastify goes through
 * @fastify/middie (URL sanitising, path matching, an Express-style req/res shim) on every request, a
 * lot of work for one `storage.run`. A Fastify `onRequest` hook runs the rest
 * of the request (hooks, body parsing, guards, handler) inside the same store, and async work started
 * from it inherits it, as before.
 */
@Injectable()
export class RequestLogContext implements OnModuleInit {
  constructor(private readonly adapterHost: HttpAdapterHost) {}

  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter.getInstance<FastifyInstance>();
    fastify.addHook('onRequest', (request, _reply, done) => {
      storage.run(new Store(request.log as Logger), done);
    });
  }
}
