import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';

/**
 * The fake API for component tests; each test adds the handlers it needs with server.use(...). The
 * queue board's login, which every admin page with its link posts, is answered by default.
 */
export const server = setupServer(http.post('/admin/queues/login', () => new HttpResponse(null, { status: 204 })));

/** A `POST path` handler answered by `respond`; every body it was sent is kept in `sent`, for the test to check. */
export function recordPosts<T>(path: string, respond: (body: T) => Response) {
  const sent: T[] = [];
  const handler = http.post(path, async ({ request }) => {
    const body = (await request.json()) as T;
    sent.push(body);
    return respond(body);
  });
  return { sent, handler };
}
