import { SaleCatalog } from '../../apps/api/src/sales/sale-catalog';
import { SoldOutGate } from '../../apps/api/src/purchase/strategies/redis-lua/sold-out-gate';
import { waitFor } from '../support/fixtures';
import { closeWithin } from '../support/bounded-close';
import { PrivateRedisServer } from '../support/private-redis';
import { startStack, type RunningStack } from '../support/running-stack';
import { createTestEnv, type TestEnv } from '../support/test-env';

const WAIT_TIMEOUT_MS = 4_000;
/** Far below the WAIT's timeout: an answer this fast did not queue behind a WAIT. */
const FAST_MS = 1_500;

type Answer = { orderNo: string; status: string } | { error: { code: string } };

/**
 * DURABLE_ACK=replica with the replica gone: only the purchases that wait for it are slowed; everything
 * else answers at once, and later purchases are refused with 503 + retry-after without waiting, until a
 * replica confirms again.
 */
describe('durable acknowledgement without a replica (replica SIGKILLed, then back)', () => {
  let primary: PrivateRedisServer;
  let replica: PrivateRedisServer;
  let testEnv: TestEnv;
  let stack: RunningStack;

  beforeAll(async () => {
    ({ primary, replica } = await PrivateRedisServer.startWithReplica());
    testEnv = await createTestEnv({
      REDIS_URL: primary.url,
      DURABLE_ACK: 'replica',
      DURABLE_ACK_TIMEOUT_MS: String(WAIT_TIMEOUT_MS),
      REDIS_FALLBACK: 'off',
      SOLD_OUT_FLAG_TTL_MS: '600000',
    });
    stack = await startStack(testEnv.config);
  });

  afterAll(async () => {
    await closeWithin(
      10_000,
      stack.close().catch(() => undefined),
    );
    await primary.destroy();
    await replica.destroy();
    await testEnv.cleanup();
  });

  const buy = (saleId: string, guestToken: string, token: string) =>
    stack.client.call<Answer>('POST', `/api/sales/${saleId}/purchase`, { token: guestToken, json: { token } });

  async function timed<T>(work: () => Promise<T>): Promise<{ result: T; ms: number }> {
    const started = performance.now();
    const result = await work();
    return { result, ms: performance.now() - started };
  }

  it('a WAIT with no replica holds only its purchase; the next purchases are shed at once; a replica back sells again', async () => {
    const adminToken = await stack.client.adminToken(testEnv.env['ADMIN_PASSWORD']!);
    const live = (await stack.client.createSale(adminToken, { stock: 100 })).id;
    const soldOut = (await stack.client.createSale(adminToken, { stock: 1 })).id;
    const [ada, bob, cyd, dan, eve] = await Promise.all(Array.from({ length: 5 }, () => stack.client.guest()));
    expect((await buy(soldOut, ada!.token, await stack.client.submitToken(soldOut, ada!.token))).status).toBe(202);
    const bobToken = await stack.client.submitToken(soldOut, bob!.token);
    expect((await buy(soldOut, bob!.token, bobToken)).status).toBe(410);
    const sale = await stack.api.get(SaleCatalog).get(soldOut);
    await waitFor(
      'the sold-out flag',
      async () => stack.api.get(SoldOutGate).refuses(sale, bob!.userId, bobToken, 1),
      Boolean,
      5_000,
    );
    const cydToken = await stack.client.submitToken(live, cyd!.token);
    const eveToken = await stack.client.submitToken(live, eve!.token);

    await replica.kill();
    await new Promise((resolve) => setTimeout(resolve, 300)); // the primary sees its replica gone

    // Cyd's purchase reserves, then waits for a replica that is not there.
    const waiting = timed(() => buy(live, cyd!.token, cydToken));
    await new Promise((resolve) => setTimeout(resolve, 300));
    // Meanwhile: a token is issued (a Redis write) and a sold-out buyer is answered, both at once.
    const issued = await timed(() =>
      stack.client.call<{ token: string }>('POST', `/api/sales/${live}/tokens`, { token: dan!.token }),
    );
    expect(issued.result.status).toBe(201);
    expect(issued.ms).toBeLessThan(FAST_MS);
    const refused = await timed(() => buy(soldOut, bob!.token, bobToken));
    expect(refused.result.status).toBe(410);
    expect(refused.ms).toBeLessThan(FAST_MS);

    const cyds = await waiting;
    expect(cyds.result.status).toBe(503);
    expect(cyds.result.headers['retry-after']).toBe('1');
    expect(cyds.ms).toBeGreaterThanOrEqual(WAIT_TIMEOUT_MS - 500);

    // The replica is known to be missing: the next purchase is refused at once, before reserving.
    const shed = await timed(() => buy(live, eve!.token, eveToken));
    expect(shed.result.status).toBe(503);
    expect(shed.result.headers['retry-after']).toBe('1');
    expect(shed.ms).toBeLessThan(FAST_MS);

    await replica.restart();
    await replica.replicationLinked();
    const eves = await waitFor(
      "Eve's purchase, confirmed by the replica",
      () => buy(live, eve!.token, eveToken),
      (response) => response.status !== 503,
      3 * WAIT_TIMEOUT_MS,
    );
    expect(eves.status).toBe(202);
    // Cyd's reservation was made before her 503: the same token now gets it, confirmed.
    const cydAgain = await buy(live, cyd!.token, cydToken);
    expect(cydAgain.status).toBe(202);
  });
});
