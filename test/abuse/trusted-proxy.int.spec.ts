import { startStack, type RunningStack } from '../support/running-stack';
import { createTestEnv, type TestEnv } from '../support/test-env';

/** One guest sign-in per client IP and minute: whose IP it is shows in the second attempt's answer. */
const ONE_GUEST_PER_IP = { RATE_LIMIT_GUEST_SIGN_IN_POINTS: '1' };

async function stackWith(overrides: Record<string, string>): Promise<{ testEnv: TestEnv; stack: RunningStack }> {
  const testEnv = await createTestEnv({ ...ONE_GUEST_PER_IP, ...overrides });
  return { testEnv, stack: await startStack(testEnv.config, { worker: false }) };
}

const guestFrom = (stack: RunningStack, forwardedFor: string) =>
  stack.client.call('POST', '/api/auth/guest', { json: {}, headers: { 'x-forwarded-for': forwardedFor } });

const boardCookie = async (stack: RunningStack, admin: string, forwardedProto: string) => {
  const login = await stack.client.raw('POST', '/admin/queues/login', {
    token: admin,
    headers: { 'x-forwarded-proto': forwardedProto },
  });
  expect(login.status).toBe(204);
  return String(login.headers['set-cookie']).split('; ');
};

/**
 * TRUST_PROXY (docs/operations.md): behind the load balancer it names, the client's address and scheme
 * are the ones it forwards — per-IP limits count each client, and the admin cookie is Secure over https.
 * Without it, forwarded headers are a client's claim and are ignored. (Development mode here: in
 * production the cookie is Secure whatever the scheme, test/deployment/production-boot.int.spec.ts.)
 */
describe('TRUST_PROXY: forwarded client address and scheme (real app, Redis)', () => {
  let behindProxy: { testEnv: TestEnv; stack: RunningStack };
  let direct: { testEnv: TestEnv; stack: RunningStack };

  beforeAll(async () => {
    behindProxy = await stackWith({ TRUST_PROXY: '127.0.0.1' });
    direct = await stackWith({});
  });

  afterAll(async () => {
    for (const world of [behindProxy, direct]) {
      await world?.stack.close();
      await world?.testEnv.cleanup();
    }
  });

  it('behind a trusted proxy, per-IP limits count the forwarded client, each on its own', async () => {
    const { stack } = behindProxy;
    expect((await guestFrom(stack, '203.0.113.10')).status).toBe(201);
    expect((await guestFrom(stack, '203.0.113.10')).status).toBe(429);
    expect((await guestFrom(stack, '203.0.113.11')).status).toBe(201);
  });

  it('without TRUST_PROXY, X-Forwarded-For is ignored: a client cannot pick a fresh key', async () => {
    const { stack } = direct;
    expect((await guestFrom(stack, '203.0.113.20')).status).toBe(201);
    const second = await guestFrom(stack, '203.0.113.21');
    expect(second.status).toBe(429);
    expect(second.body).toMatchObject({ error: { code: 'RATE_LIMITED' } });
  });

  it('the admin cookie is Secure when the trusted proxy says https, and only then', async () => {
    const trusted = await behindProxy.stack.client.adminToken(behindProxy.testEnv.env['ADMIN_PASSWORD']!);
    expect(await boardCookie(behindProxy.stack, trusted, 'https')).toContain('Secure');
    expect(await boardCookie(behindProxy.stack, trusted, 'http')).not.toContain('Secure');
    const untrusted = await direct.stack.client.adminToken(direct.testEnv.env['ADMIN_PASSWORD']!);
    expect(await boardCookie(direct.stack, untrusted, 'https')).not.toContain('Secure');
  });
});
