import type { Sale, Ticket } from '@flash-sale/contract';
import { ApiClient, inAnHour } from '../support/api-client';
import { type AppProcess, startApiProcess } from '../support/app-processes';
import { type LoadBalancer, startLoadBalancer } from '../support/load-balancer';
import { PrivateRedisServer } from '../support/private-redis';
import { createTestEnv, type TestEnv } from '../support/test-env';
import { RoomBuyer, sleep } from './room-buyers';

/**
 * The room shared by two API processes behind HAProxy, on a Redis of its own: an API SIGKILLed while
 * buyers wait loses nobody's place; Redis restarted without its data, or the admin removing and adding the
 * room, loses neither the line nor the cap (the room is written back from MySQL), and units in doubt are
 * never called sold out.
 */
describe('the waiting room across API processes and a Redis restart', () => {
  let redis: PrivateRedisServer;
  let testEnv: TestEnv;
  let apis: AppProcess[];
  let balancer: LoadBalancer;
  let client: ApiClient;
  let admin: string;

  beforeAll(async () => {
    redis = await PrivateRedisServer.start();
    testEnv = await createTestEnv({ REDIS_URL: redis.url });
    apis = [];
    for (const name of ['api-1', 'api-2']) apis.push(await startApiProcess({ env: testEnv.env, name }));
    balancer = await startLoadBalancer(apis.map((api) => api.port!));
    client = new ApiClient(balancer.url);
    admin = await client.adminToken(testEnv.env['ADMIN_PASSWORD']!);
  }, 120_000);

  afterAll(async () => {
    await client?.close();
    await balancer?.stop();
    await Promise.all((apis ?? []).map((api) => api.stop()));
    await redis?.destroy();
    await testEnv?.cleanup();
  });

  async function roomSale(waitingRoom: Record<string, number>, strategy = 'redis-lua', stock = 100): Promise<Sale> {
    const created = await client.callRetryingAfter<Sale>('POST', '/api/admin/sales', {
      token: admin,
      json: {
        name: 'Room',
        priceCents: 100,
        stock,
        endsAt: inAnHour(),
        purpose: 'load-test',
        strategy,
        waitingRoom,
      },
    });
    expect(created.status).toBe(201);
    return created.body;
  }

  /** Polls at the advice until told otherwise; a request cut by a dying API is sent again. */
  async function pollOnce(buyer: RoomBuyer): Promise<Ticket> {
    for (;;) {
      try {
        return await buyer.next();
      } catch {
        await sleep(300);
      }
    }
  }

  it('an API SIGKILLed while buyers wait: every place only moves forward, and everyone is admitted in turn', async () => {
    const sale = await roomSale({ admitPerSecond: 4 });
    const guests = await client.guests(24, 12);
    const buyers = guests.map((guest) => new RoomBuyer(client, sale.id, guest));
    for (const buyer of buyers) expect((await buyer.join()).status).toBe(201);
    const killAt = Date.now() + 2_000;
    let killed = false;
    const walks = buyers.map(async (buyer) => {
      let ticket = buyer.last!;
      while (ticket.state === 'waiting') {
        if (!killed && Date.now() >= killAt) {
          killed = true;
          await apis[0]!.kill();
        }
        ticket = await pollOnce(buyer);
      }
      return ticket;
    });
    const tickets = await Promise.all(walks);
    expect(killed).toBe(true);
    expect(tickets.map((ticket) => ticket.state)).toEqual(tickets.map(() => 'admitted'));
    for (const buyer of buyers) {
      const positions = buyer.tickets.flatMap(({ ticket }) => (ticket.position ? [ticket.position] : []));
      for (let i = 1; i < positions.length; i++) expect(positions[i]).toBeLessThanOrEqual(positions[i - 1]!);
    }
    // Admitted in the order they joined (after the opening: first come, first served), give or take the
    // poll that noticed it.
    const joinOrder = buyers.map((buyer) => buyer.admittedAt!);
    const inversions = joinOrder.filter((at, i) => joinOrder.slice(i + 1).some((later) => later < at - 6_000));
    expect(inversions).toEqual([]);
    await apis[0]!.restart();
  }, 120_000);

  it('two APIs admit nobody for a unit already gone: every admitted buyer who buys gets one, the rest are told sold out', async () => {
    const sale = await roomSale({ admitPerSecond: 100 }, 'redis-lua', 8);
    const guests = await client.guests(40, 20);
    // Round robin through HAProxy: consecutive requests of one buyer go to both APIs.
    const buyers = guests.map((guest) => new RoomBuyer(client, sale.id, guest));
    const tickets = await Promise.all(buyers.map((buyer) => buyer.walk({ buy: true })));
    expect(buyers.filter((buyer) => buyer.orderNo)).toHaveLength(8);
    expect(buyers.filter((buyer) => buyer.refusal !== undefined).map((buyer) => buyer.refusal)).toEqual([]);
    expect(tickets.filter((ticket) => ticket.state === 'sold_out')).toHaveLength(32);
  }, 120_000);

  /** Polls until answered 200 (a 503 while the APIs reconnect, a 429 too soon: waited out); the ticket. */
  async function pollAnswered(buyer: RoomBuyer): Promise<Ticket> {
    for (;;) {
      const polled = await buyer.poll();
      if (polled.status === 200) return polled.body;
      if (polled.status === 404) throw new Error('a buyer the room had placed was told they hold no ticket');
      await sleep(Number(polled.headers['retry-after'] ?? 1) * 1000);
    }
  }

  it("Redis restarted without its data: the holders' passes still count against the cap, the waiters keep their places, nobody overtakes", async () => {
    const sale = await roomSale({ admitPerSecond: 50, maxShopping: 2 }, 'db-optimistic');
    const guests = await client.guests(6, 6);
    const buyers = guests.map((guest) => new RoomBuyer(client, sale.id, guest));
    // One after the other, after the opening: first come, first served.
    for (const buyer of buyers) await buyer.join();
    await sleep(1_100);
    for (const buyer of buyers) await pollOnce(buyer);
    const holders = buyers.filter((buyer) => buyer.last!.state === 'admitted');
    expect(holders).toEqual(buyers.slice(0, 2));
    const waiters = buyers.slice(2);
    const positionsBefore = waiters.map((waiter) => waiter.last!.position);
    expect(positionsBefore).toEqual([1, 2, 3, 4]);

    await redis.kill();
    await redis.restart();

    // The waiters are still in line, in the same order, and nobody is admitted while the two passes count.
    await sleep(1_000);
    const after = [];
    for (const waiter of waiters) after.push(await pollAnswered(waiter));
    expect(after.map((ticket) => ticket.state)).toEqual(['waiting', 'waiting', 'waiting', 'waiting']);
    expect(after.map((ticket) => ticket.position)).toEqual([1, 2, 3, 4]);
    const view = await client.callRetryingAfter<{ shopping: number; waiting: number }>(
      'GET',
      `/api/admin/sales/${sale.id}/queue`,
      { token: admin },
    );
    expect(view.body).toMatchObject({ shopping: 2, waiting: 4 });

    // A pass is signed: it still gets a token, and its holder buys; that frees a place in the cap, which
    // goes to the first waiter — nobody behind them.
    const first = holders[0]!;
    await first.buy(first.last!.pass!);
    expect(first.orderNo).toBeDefined();
    const next = await waitForAdmission(waiters);
    expect(next).toBe(waiters[0]);
  }, 120_000);

  /** Polls every waiter at the advice until one is admitted; that one. */
  async function waitForAdmission(waiters: RoomBuyer[]): Promise<RoomBuyer> {
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline) {
      for (const waiter of waiters) {
        if ((await pollAnswered(waiter)).state === 'admitted') return waiter;
      }
      await sleep(300);
    }
    throw new Error('nobody was admitted');
  }

  it('an admin removes the room and adds it back: the same line, the same cap', async () => {
    const sale = await roomSale({ admitPerSecond: 50, maxShopping: 1 }, 'db-optimistic');
    const buyers = (await client.guests(3, 3)).map((guest) => new RoomBuyer(client, sale.id, guest));
    for (const buyer of buyers) await buyer.join();
    await sleep(1_100);
    for (const buyer of buyers) await pollOnce(buyer);
    expect(buyers.map((buyer) => buyer.last!.state)).toEqual(['admitted', 'waiting', 'waiting']);

    const patch = (waitingRoom: unknown) =>
      client.callRetryingAfter('PATCH', `/api/admin/sales/${sale.id}`, { token: admin, json: { waitingRoom } });
    expect((await patch(null)).status).toBe(200);
    expect((await patch({ admitPerSecond: 50, maxShopping: 1 })).status).toBe(200);

    await sleep(1_000);
    const tickets = [];
    for (const buyer of buyers.slice(1)) tickets.push(await pollAnswered(buyer));
    expect(tickets.map((ticket) => [ticket.state, ticket.position])).toEqual([
      ['waiting', 1],
      ['waiting', 2],
    ]);
  }, 60_000);

  it('a redis-lua room whose leased units are in doubt after a Redis loss says wait, never sold_out', async () => {
    // All ten units leased to Redis (a lease covers the stock); Redis then loses them: in doubt until the
    // worker settles them — none of these processes runs one, so they stay in doubt for the test.
    const sale = await roomSale({ admitPerSecond: 50, maxShopping: 5 }, 'redis-lua', 10);
    await redis.kill();
    await redis.restart();
    const joiners = (await client.guests(3, 3)).map((guest) => new RoomBuyer(client, sale.id, guest));
    for (const joiner of joiners) {
      let joined = await joiner.join();
      while (joined.status === 503) {
        await sleep(Number(joined.headers['retry-after'] ?? 1) * 1000);
        joined = await joiner.join();
      }
      expect(joined.status).toBe(201);
      expect(joined.body.state).not.toBe('sold_out');
      await sleep(600);
    }
  }, 60_000);
});
