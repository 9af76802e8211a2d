import { Writable } from 'node:stream';
import { OptimisticLockExhaustedError } from '@flash-sale/db';
import { DomainError, ErrorCode, RetryLaterError } from '@flash-sale/domain';
import { Logger } from '@nestjs/common';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { sendError } from '../common/error.filter';
import { AccessLog } from './logging';

interface AccessLine {
  level: string;
  msg: string;
  req?: { url: string };
  res?: { statusCode: number };
}

/** What each route throws; every error leaves through `sendError`, as in the API. */
const THROWN: Record<string, () => unknown> = {
  // Refusals the contract calls correct (docs/api.md).
  '/optimistic-retries-ran-out': () => new OptimisticLockExhaustedError('gave up'),
  '/lock-busy': () => new RetryLaterError(ErrorCode.Unavailable, 'Could not get the lock; retry', 1),
  '/rate-limited': () => new RetryLaterError(ErrorCode.RateLimited, 'Slow down', 3),
  '/sold-out': () => new DomainError(ErrorCode.SoldOut, 'Sold out'),
  '/limit-reached': () => new DomainError(ErrorCode.LimitReached, 'Limit reached'),
  '/sale-ended': () => new DomainError(ErrorCode.SaleEnded, 'Ended'),
  // Faults.
  '/bug': () => new Error('a bug'),
  '/mysql-down': () => Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
};

/**
 * The access line's level, through a real Fastify with the API's AccessLog: a fault is an `error`
 * line, a contract refusal — a `503` + `retry-after` included — an `info` line, so `npm start`'s
 * terminal (warnings and errors only) stays quiet while the oversell demonstration runs.
 */
describe('AccessLog: the level of a request’s line', () => {
  const lines: AccessLine[] = [];
  let app: FastifyInstance;

  beforeAll(async () => {
    Logger.overrideLogger(false); // sendError's stack traces of the faults below: expected, not news
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const text of chunk.toString().split('\n')) if (text) lines.push(JSON.parse(text) as AccessLine);
        done();
      },
    });
    const logger: FastifyBaseLogger = pino(
      { level: 'info', formatters: { level: (label: string) => ({ level: label }) } },
      sink,
    );
    app = Fastify({ loggerInstance: logger, logController: new AccessLog(100) });
    for (const [url, thrown] of Object.entries(THROWN)) {
      app.get(url, (request, reply) => sendError(request, reply, thrown()));
    }
    // A 503 answered without sendError's verdict (no contract error behind it) is a fault too.
    app.get('/bare-503', (_request, reply) => reply.status(503).send({}));
    await app.ready();
  });

  afterAll(() => app.close());

  async function lineOf(url: string): Promise<{ status: number; retryAfter: unknown; line: AccessLine | undefined }> {
    const response = await app.inject({ method: 'GET', url });
    const line = lines.find((entry) => entry.msg === 'request completed' && entry.req?.url === url);
    return { status: response.statusCode, retryAfter: response.headers['retry-after'], line };
  }

  it.each([
    ['/optimistic-retries-ran-out', 503, '1'],
    ['/lock-busy', 503, '1'],
    ['/rate-limited', 429, '3'],
    ['/sold-out', 410, undefined],
    ['/limit-reached', 409, undefined],
    ['/sale-ended', 410, undefined],
  ])('%s: a contract refusal (%i, retry-after %s) is an info line', async (url, status, retryAfter) => {
    const answer = await lineOf(url);
    expect([answer.status, answer.retryAfter]).toEqual([status, retryAfter]);
    expect(answer.line).toMatchObject({ level: 'info', res: { statusCode: status } });
  });

  it.each([
    ['/bug', 500],
    ['/mysql-down', 503],
    ['/bare-503', 503],
  ])('%s: a fault (%i) is an error line', async (url, status) => {
    const answer = await lineOf(url);
    expect(answer.status).toBe(status);
    expect(answer.line).toMatchObject({ level: 'error', res: { statusCode: status } });
  });
});
