import type { AppConfig } from '@flash-sale/config';
import type { Params } from 'nestjs-pino';
import { pino } from 'pino';

/** LOG_PRETTY=1: one readable line per entry, e.g. `12:00:00.000 INFO [api RedisReservation] …`. */
const PRETTY_OPTIONS = {
  singleLine: true,
  translateTime: 'SYS:HH:MM:ss.l',
  ignore: 'pid,hostname,service,context',
  messageFormat: '[{service}{if context} {context}{end}] {msg}',
};

/**
 * The worker's logs: pino JSON lines on stdout (pino-pretty when LOG_PRETTY=1), the same shape as the
 * API's with `service: "worker"`. The worker has no requests, so nestjs-pino only supplies the logger.
 */
export function workerLoggerParams(ops: AppConfig['ops']): Params {
  const logger = pino({
    level: ops.logLevel,
    formatters: { level: (label) => ({ level: label }) },
    timestamp: pino.stdTimeFunctions.isoTime,
    base: { service: 'worker', pid: process.pid },
    ...(ops.logPretty && ops.logLevel !== 'silent'
      ? { transport: { target: 'pino-pretty', options: PRETTY_OPTIONS } }
      : {}),
  });
  return { pinoHttp: { logger } };
}
