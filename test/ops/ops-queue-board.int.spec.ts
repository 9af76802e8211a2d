import { useStackWorld } from '../support/stack-world';

const BOARD = '/admin/queues';

describe('queue dashboard at /admin/queues, admins only (real app, real BullMQ queue)', () => {
  const w = useStackWorld({ worker: false });
  let admin: string;
  let guest: string;

  beforeAll(async () => {
    admin = w.admin;
    guest = (await w.client.guest()).token;
  });

  const errorOf = (text: string) => (JSON.parse(text) as { error: { code: string; message: string } }).error;

  it('no token → 401, a guest token → 403, with the API error body', async () => {
    const anonymous = await w.client.raw('GET', BOARD);
    expect(anonymous.status).toBe(401);
    expect(errorOf(anonymous.text)).toMatchObject({ code: 'UNAUTHENTICATED', message: expect.any(String) });

    const asGuest = await w.client.raw('GET', BOARD, { token: guest });
    expect(asGuest.status).toBe(403);
    expect(errorOf(asGuest.text).code).toBe('FORBIDDEN');

    const forged = await w.client.raw('GET', `${BOARD}/api/queues`, { token: `${admin}x` });
    expect(forged.status).toBe(401);
    // The dashboard's own API is guarded too, not only its page.
    expect((await w.client.raw('GET', `${BOARD}/api/queues`, { token: guest })).status).toBe(403);
  });

  it('an admin bearer token opens the board, which shows the orders queue (read-only)', async () => {
    const page = await w.client.raw('GET', BOARD, { token: admin });
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);

    const queues = await w.client.raw('GET', `${BOARD}/api/queues`, { token: admin });
    expect(queues.status).toBe(200);
    const body = JSON.parse(queues.text) as { queues: { name: string; readOnlyMode: boolean }[] };
    expect(body.queues.map((queue) => queue.name)).toContain('orders');
    expect(body.queues.every((queue) => queue.readOnlyMode)).toBe(true);
  });

  it('POST login with an admin bearer token sets an HttpOnly cookie, which then opens the board', async () => {
    const login = await w.client.raw('POST', `${BOARD}/login`, { token: admin });
    expect(login.status).toBe(204);
    const setCookie = String(login.headers['set-cookie']);
    expect(setCookie).toMatch(/^fs_admin=[^;]+;/);
    expect(setCookie).toContain('HttpOnly');
    expect(setCookie).toContain(`Path=${BOARD}`);
    expect(setCookie).toContain('SameSite=Lax');
    const cookie = setCookie.split(';')[0]!;

    const page = await w.client.raw('GET', BOARD, { headers: { cookie } });
    expect(page.status).toBe(200);
    expect((await w.client.raw('GET', `${BOARD}/api/queues`, { headers: { cookie } })).status).toBe(200);
  });

  it('login refuses a guest token (403) or none (401) and sets no cookie; a guest cookie is refused too', async () => {
    const asGuest = await w.client.raw('POST', `${BOARD}/login`, { token: guest });
    expect(asGuest.status).toBe(403);
    expect(errorOf(asGuest.text).code).toBe('FORBIDDEN');
    expect(asGuest.headers['set-cookie']).toBeUndefined();

    const none = await w.client.raw('POST', `${BOARD}/login`);
    expect(none.status).toBe(401);
    expect(errorOf(none.text).code).toBe('UNAUTHENTICATED');
    // The token in the URL, as the board's login once took it, opens nothing any more.
    const inUrl = await w.client.raw('GET', `${BOARD}/login?token=${encodeURIComponent(admin)}`);
    expect(inUrl.status).toBe(404);
    expect(inUrl.headers['set-cookie']).toBeUndefined();

    expect((await w.client.raw('GET', BOARD, { headers: { cookie: `fs_admin=${guest}` } })).status).toBe(403);
    expect((await w.client.raw('GET', BOARD, { headers: { cookie: 'fs_admin=garbage' } })).status).toBe(401);
  });
});
