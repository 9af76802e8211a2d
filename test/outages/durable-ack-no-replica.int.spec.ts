import type { Ticket } from '@flash-sale/contract';
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
type TicketAnswer = Ticket | { error: { code: string } };

/**
 * DURABLE_ACK=replica with the replica gone: only the purchases (and a room's new places and passes) that
 * wait for it are slowed; everything else answers at once, and later ones are refused with 503 +
 * retry-after without waiting, until a replica confirms again.
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

  it("a room's new place or pass waits for a replica too: 503 without one, the same place once it is back", async () => {
    const adminToken = await stack.client.adminToken(testEnv.env['ADMIN_PASSWORD']!);
    // One admission a second and room for one shopper: the first buyer is admitted at once, the others wait.
    const room = (await stack.client.createSale(adminToken, { waitingRoom: { admitPerSecond: 1, maxShopping: 1 } })).id;
    const [fay, gus, hal] = await Promise.all(Array.from({ length: 3 }, () => stack.client.guest()));
    const queue = (guestToken: string, method: 'POST' | 'GET') =>
      stack.client.call<TicketAnswer>(method, `/api/sales/${room}/queue`, { token: guestToken });
    // Joining again runs the room's admission too: Fay is admitted within the first second or so.
    const fays = (
      await waitFor(
        'Fay admitted, confirmed by the replica',
        () => queue(fay!.token, 'POST'),
        (answer) => answer.status === 201 && (answer.body as Ticket).state === 'admitted',
        3 * WAIT_TIMEOUT_MS,
      )
    ).body as Ticket;

    await replica.kill();
    await new Promise((resolve) => setTimeout(resolve, 300));
    // Gus's join places him in Redis and MySQL, then waits for a replica that is not there: he is not told.
    const gusJoin = await timed(() => queue(gus!.token, 'POST'));
    expect(gusJoin.result.status).toBe(503);
    expect(gusJoin.result.headers['retry-after']).toBe('1');
    expect(gusJoin.ms).toBeGreaterThanOrEqual(WAIT_TIMEOUT_MS - 500);
    // The room's master is known to be without a replica: Hal's join is refused at once, nothing done.
    const halJoin = await timed(() => queue(hal!.token, 'POST'));
    expect(halJoin.result.status).toBe(503);
    expect(halJoin.ms).toBeLessThan(FAST_MS);
    // Fay is refused at once too, but the pass she was given still buys: it is signed, checked without Redis.
    expect((await queue(fay!.token, 'POST')).status).toBe(503);
    const faysToken = await timed(() =>
      stack.client.call('POST', `/api/sales/${room}/tokens`, { token: fay!.token, json: { pass: fays.pass } }),
    );
    expect(faysToken.result.status).toBe(201);
    expect(faysToken.ms).toBeLessThan(FAST_MS);

    await replica.restart();
    await replica.replicationLinked();
    const gusAgain = await waitFor(
      "Gus's place, confirmed by the replica",
      () => queue(gus!.token, 'POST'),
      (answer) => answer.status !== 503,
      3 * WAIT_TIMEOUT_MS,
    );
    // The place he was given before his 503, now told: first in line behind Fay's turn.
    expect([gusAgain.status, (gusAgain.body as Ticket).state, (gusAgain.body as Ticket).position]).toEqual([
      201,
      'waiting',
      1,
    ]);
    expect(((await queue(hal!.token, 'POST')).body as Ticket).position).toBe(2);
  });
});
