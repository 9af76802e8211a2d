import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';

/**
 * The fake API for component tests; each test adds the handlers it needs with server.use(...). The
 * queue board's login, which every admin page with its link posts, is answered by default.
 */
export const server = setupServer(http.post('/admin/queues/login', () => new HttpResponse(null, { status: 204 })));
