import { DomainError, ErrorCode } from '@flash-sale/domain';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter as BullBoardFastifyAdapter } from '@bull-board/fastify';
import fastifyCookie from '@fastify/cookie';
import { ModuleRef } from '@nestjs/core';
import { JwtService } from '@nestjs/jwt';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AuthGuard } from '../auth/auth.guard';
import { toErrorResponse } from '../common/error-body';
import { registeredQueues } from './registered-queues';

const QUEUE_BOARD_PATH = '/admin/queues';
/** Holds an admin access token for the dashboard's own requests (its page and its XHRs). */
const QUEUE_BOARD_COOKIE = 'fs_admin';

/**
 * Bull Board at /admin/queues, for admins only: `Authorization: Bearer <admin token>`, or the
 * `fs_admin` cookie that `GET /admin/queues/login?token=<admin token>` sets before redirecting to the
 * board (a browser cannot add a header to a page it navigates to). Tokens are checked by the API's own
 * AuthGuard; refusals have the API's error body. Read-only: emptying or removing jobs by hand could drop
 * the only job of a reservation, which is exactly what the audit reports as lost.
 */
export async function installQueueBoard(app: NestFastifyApplication): Promise<void> {
  const guard = app.get(AuthGuard);
  const jwt = app.get(JwtService);
  const serverAdapter = new BullBoardFastifyAdapter();
  serverAdapter.setBasePath(QUEUE_BOARD_PATH);
  createBullBoard({
    queues: registeredQueues(app.get(ModuleRef)).map((queue) => new BullMQAdapter(queue, { readOnlyMode: true })),
    serverAdapter,
    options: { uiConfig: { boardTitle: 'Flash sale queues' } },
  });

  /** The token, once it is known to be an admin's; else the 401 or 403 to answer. */
  const requireAdmin = async (token: string | undefined): Promise<string> => {
    if (!token) {
      throw new DomainError(
        ErrorCode.Unauthenticated,
        `Sign in as an admin: send Authorization: Bearer <token>, or open ${QUEUE_BOARD_PATH}/login?token=<token>`,
      );
    }
    const user = await guard.verify(token);
    if (user.role !== 'admin') throw new DomainError(ErrorCode.Forbidden, 'This needs an admin token');
    return token;
  };
  const refuse = (reply: FastifyReply, error: unknown) => {
    const { status, body } = toErrorResponse(error);
    return reply.status(status).send(body);
  };

  // One encapsulated scope: the cookie parser and the auth hook apply to the dashboard and nothing else.
  await app.register(async (board: FastifyInstance) => {
    await board.register(fastifyCookie);

    board.get(
      `${QUEUE_BOARD_PATH}/login`,
      async (request: FastifyRequest<{ Querystring: { token?: unknown } }>, reply) => {
        let token: string;
        try {
          token = await requireAdmin(typeof request.query.token === 'string' ? request.query.token : undefined);
        } catch (error) {
          return refuse(reply, error);
        }
        const expiresAt = jwt.decode<{ exp?: number } | null>(token)?.exp;
        void reply
          // The token is in this URL: keep it out of caches and of the next page's Referer.
          .header('cache-control', 'no-store')
          .header('referrer-policy', 'no-referrer')
          .setCookie(QUEUE_BOARD_COOKIE, token, {
            path: QUEUE_BOARD_PATH,
            httpOnly: true,
            sameSite: 'lax',
            secure: request.protocol === 'https',
            ...(expiresAt ? { maxAge: Math.max(0, expiresAt - Math.floor(Date.now() / 1000)) } : {}),
          });
        return reply.redirect(QUEUE_BOARD_PATH, 303);
      },
    );

    await board.register(async (guarded: FastifyInstance) => {
      guarded.addHook('onRequest', async (request, reply) => {
        const header = request.headers.authorization;
        const token = header?.startsWith('Bearer ')
          ? header.slice('Bearer '.length).trim()
          : request.cookies[QUEUE_BOARD_COOKIE];
        try {
          await requireAdmin(token);
        } catch (error) {
          return refuse(reply, error);
        }
      });
      await guarded.register(serverAdapter.registerPlugin(), { prefix: QUEUE_BOARD_PATH });
    });
  });
}
