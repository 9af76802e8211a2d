import { DomainError, ErrorCode } from '@flash-sale/domain';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter as BullBoardFastifyAdapter } from '@bull-board/fastify';
import fastifyCookie from '@fastify/cookie';
import { JwtService } from '@nestjs/jwt';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AuthGuard } from '../auth/auth.guard';
import { toErrorResponse } from '../common/error-body';
import { ProductQueues } from '@flash-sale/queue';

const QUEUE_BOARD_PATH = '/admin/queues';
/** Holds an admin access token for the dashboard's own requests (its page and its XHRs). */
const QUEUE_BOARD_COOKIE = 'fs_admin';

/**
 * Bull Board at /admin/queues, for admins only: `Authorization: Bearer <admin token>`, or the
 * `fs_admin` cookie that `POST /admin/queues/login` (with that header) sets, so that the console can
 * then open the board in a tab (a browser cannot add a header to a page it navigates to). Tokens are checked by the API's own
 * AuthGuard; refusals have the API's error body. Read-only: emptying or removing jobs by hand could drop
 * the only job of a reservation, which is exactly what the audit reports as lost.
 */
export async function installQueueBoard(
  app: NestFastifyApplication,
  options: { secureCookie: boolean },
): Promise<void> {
  const guard = app.get(AuthGuard);
  const jwt = app.get(JwtService);
  const serverAdapter = new BullBoardFastifyAdapter();
  serverAdapter.setBasePath(QUEUE_BOARD_PATH);
  createBullBoard({
    queues: app.get(ProductQueues).all.map((queue) => new BullMQAdapter(queue, { readOnlyMode: true })),
    serverAdapter,
    options: { uiConfig: { boardTitle: 'Flash sale queues' } },
  });

  /** The token, once it is known to be an admin's; else the 401 or 403 to answer. */
  const requireAdmin = async (token: string | undefined): Promise<string> => {
    if (!token) {
      throw new DomainError(
        ErrorCode.Unauthenticated,
        `Sign in as an admin: send Authorization: Bearer <token> (POST ${QUEUE_BOARD_PATH}/login sets a cookie)`,
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

    // The token travels in the Authorization header, never in a URL (which lands in browser history,
    // proxy and access logs and Referer headers). A cross-site page cannot send that header without
    // the API's consent (CORS), so this cannot be forged into a login by another site.
    board.post(`${QUEUE_BOARD_PATH}/login`, async (request: FastifyRequest, reply) => {
      const header = request.headers.authorization;
      let token: string;
      try {
        token = await requireAdmin(header?.startsWith('Bearer ') ? header.slice('Bearer '.length).trim() : undefined);
      } catch (error) {
        return refuse(reply, error);
      }
      const expiresAt = jwt.decode<{ exp?: number } | null>(token)?.exp;
      return reply
        .header('cache-control', 'no-store')
        .setCookie(QUEUE_BOARD_COOKIE, token, {
          path: QUEUE_BOARD_PATH,
          httpOnly: true,
          sameSite: 'lax',
          // `request.protocol` is the client's only through a trusted proxy (TRUST_PROXY, docs/operations.md).
          secure: options.secureCookie || request.protocol === 'https',
          ...(expiresAt ? { maxAge: Math.max(0, expiresAt - Math.floor(Date.now() / 1000)) } : {}),
        })
        .status(204)
        .send();
    });

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
