import type { Sale, Ticket, WaitingRoomState } from '@flash-sale/contract';
import { REDIS_CLIENT, type RedisClient } from '@flash-sale/redis';
import { AdmissionPassCodec } from '../../apps/api/src/waiting-room/admission-pass-codec';
import { inAnHour, inBatches } from '../support/api-client';
import { countRows } from '../support/fixtures';
import { useStackWorld } from '../support/stack-world';
import { errorCode, type Guest, rankCorrelation, RoomBuyer, sleep } from './room-buyers';

/**
 * A sale's waiting room on the real API, worker, Redis and MySQL (docs/api.md "The waiting room"): the
 * shuffle of who came before the opening, first come first served after it, the rate, the cap, the stock,
 * passes, the sold-out broadcast, live changes, and bad input that writes nothing.
 */
describe('the waiting room', () => {
  const w = useStackWorld({ database: true });

  async function roomSale(fields: Record<string, unknown>): Promise<Sale> {
    const created = await w.client.call<Sale>('POST', '/api/admin/sales', {
      token: w.admin,
      json: { name: 'Room sale', priceCents: 100, stock: 10, endsAt: inAnHour(), purpose: 'load-test', ...fields },
    });
    if (created.status !== 201) throw new Error(`create answered ${created.status} ${JSON.stringify(created.body)}`);
    return created.body;
  }

  const inSeconds = (s: number) => new Date(Date.now() + s * 1000).toISOString();

  async function roomState(saleId: string): Promise<WaitingRoomState> {
    return (await w.client.call<WaitingRoomState>('GET', `/api/admin/sales/${saleId}/queue`, { token: w.admin })).body;
  }

  it('a sale carries its room with defaults; an invalid room is a 400 that creates nothing', async () => {
    const sale = await roomSale({ waitingRoom: { admitPerSecond: 5 } });
    expect(sale.waitingRoom).toEqual({ admitPerSecond: 5, passSeconds: 120 });
    expect((await roomSale({})).waitingRoom).toBeNull();
    const before = await countRows(w.db, 'SELECT COUNT(*) AS n FROM sales');
    for (const waitingRoom of [
      { admitPerSecond: 0 },
      { admitPerSecond: 100_001 },
      { admitPerSecond: 5, passSeconds: 5 },
      { admitPerSecond: 5, maxShopping: 0 },
      { admitPerSecond: '5' },
      { admitPerSecond: 5, shuffle: true },
      {},
      'yes',
    ]) {
      const answer = await w.client.call('POST', '/api/admin/sales', {
        token: w.admin,
        json: { name: 'Bad room', priceCents: 1, stock: 1, endsAt: inAnHour(), waitingRoom },
      });
      expect([JSON.stringify(waitingRoom), answer.status, errorCode(answer)]).toEqual([
        JSON.stringify(waitingRoom),
        400,
        'VALIDATION_FAILED',
      ]);
    }
    expect(await countRows(w.db, 'SELECT COUNT(*) AS n FROM sales')).toBe(before);
  });

  it('bad requests: unknown sale 404, a sale without a room 409, no ticket 404, nothing written', async () => {
    const [guest] = await w.client.guests(1, 1);
    const plain = await roomSale({});
    const room = await roomSale({ waitingRoom: { admitPerSecond: 5 } });
    const call = (method: 'GET' | 'POST', saleId: string) =>
      w.client.call(method, `/api/sales/${saleId}/queue`, { token: guest!.token });
    expect([(await call('POST', '999999')).status, errorCode(await call('POST', '999999'))]).toEqual([
      404,
      'SALE_NOT_FOUND',
    ]);
    expect([(await call('POST', plain.id)).status, errorCode(await call('GET', plain.id))]).toEqual([
      409,
      'NO_WAITING_ROOM',
    ]);
    expect(errorCode(await w.client.call('GET', `/api/admin/sales/${plain.id}/queue`, { token: w.admin }))).toBe(
      'NO_WAITING_ROOM',
    );
    expect([(await call('GET', room.id)).status, errorCode(await call('GET', room.id))]).toEqual([404, 'NOT_FOUND']);
    expect((await w.client.call('POST', `/api/sales/${room.id}/queue`)).status).toBe(401);
    expect(await roomState(room.id)).toMatchObject({ waiting: 0, admitted: 0, shopping: 0 });
  });

  it('before the opening nobody has a position and joining again keeps the place; at the opening the order is drawn at random, then first come first served', async () => {
    const early = 100;
    // One buyer is admitted and, not buying, fills the cap: everyone else's place stays still while they poll.
    const sale = await roomSale({
      startsAt: inSeconds(6),
      stock: 500,
      waitingRoom: { admitPerSecond: 1, maxShopping: 1 },
    });
    const guests = await w.client.guests(early + 10, 20);
    const buyers = guests.map((guest) => new RoomBuyer(w.client, sale.id, guest));
    // Joined one after another, so the join order is known.
    for (const buyer of buyers.slice(0, early)) {
      const joined = await buyer.join();
      expect(joined.status).toBe(201);
      expect(joined.body).toMatchObject({ state: 'waiting', opensAt: sale.startsAt });
      expect(joined.body.position).toBeUndefined();
      expect(joined.body.estimatedWaitSeconds).toBeGreaterThan(0);
    }
    const again = await buyers[0]!.join();
    expect(again.status).toBe(201);
    expect((await roomState(sale.id)).waiting).toBe(early);

    // Past the first second: its admission (the one the cap allows) is made by the first join below.
    await sleep(Date.parse(sale.startsAt) - Date.now() + 1_300);
    // After the opening, late buyers in join order.
    for (const buyer of buyers.slice(early)) expect((await buyer.join()).status).toBe(201);
    const positions = new Map<string, number>();
    await inBatches(buyers, 20, async (buyer) => {
      // Past half of the advice its last ticket carried: no sooner may it poll.
      const last = buyer.tickets.at(-1)!;
      await sleep(Math.max(0, last.at + last.ticket.pollAfterMs / 2 - Date.now()) + 50);
      const polled = await buyer.poll();
      expect(polled.status).toBe(200);
      if (polled.body.state === 'waiting') positions.set(buyer.guest.userId, polled.body.position!);
    });
    const waiting = [...positions.entries()].sort((a, b) => a[1] - b[1]).map(([userId]) => userId);
    expect(waiting).toHaveLength(early + 10 - 1);
    expect([...positions.values()].sort((a, b) => a - b)).toEqual(waiting.map((_, i) => i + 1));
    const joinOrder = buyers.map((buyer) => buyer.guest.userId);
    const earlyWaiting = waiting.filter((userId) => joinOrder.indexOf(userId) < early);
    const lateWaiting = waiting.filter((userId) => joinOrder.indexOf(userId) >= early);
    // Every late buyer is behind every early one, in the order they joined.
    expect(waiting.slice(-lateWaiting.length)).toEqual(lateWaiting);
    expect(lateWaiting).toEqual(joinOrder.slice(early).filter((userId) => positions.has(userId)));
    // The early ones are not in their join order: their ranks are unrelated to it (|ρ| of 100 random
    // orderings exceeds 0.35 less than once in a thousand).
    const earlyJoinOrder = joinOrder.filter((userId) => earlyWaiting.includes(userId));
    expect(Math.abs(rankCorrelation(earlyWaiting, earlyJoinOrder))).toBeLessThan(0.35);
  }, 60_000);

  it('admits at the rate and never above the cap while buyers poll concurrently; a buyer who buys frees a place', async () => {
    const buyersCount = 30;
    const sale = await roomSale({ stock: 100, waitingRoom: { admitPerSecond: 10, maxShopping: 4 } });
    const guests = await w.client.guests(buyersCount, 20);
    const buyers = guests.map((guest) => new RoomBuyer(w.client, sale.id, guest));
    let maxShoppingSeen = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        maxShoppingSeen = Math.max(maxShoppingSeen, (await roomState(sale.id)).shopping);
        await sleep(50);
      }
    })();
    const start = Date.now();
    // Half buy at once when admitted, half hold their place in the cap for a while first.
    await Promise.all(
      buyers.map(async (buyer, i) => {
        const ticket = await buyer.walk({ buy: false });
        expect(ticket.state).toBe('admitted');
        if (i % 2) await sleep(1_500);
        await buyer.buy(ticket.pass!);
      }),
    );
    sampling = false;
    await sampler;
    const elapsedS = (Date.now() - start) / 1000;
    expect(buyers.every((buyer) => buyer.orderNo !== undefined)).toBe(true);
    expect(maxShoppingSeen).toBeLessThanOrEqual(4);
    expect(maxShoppingSeen).toBeGreaterThan(0);
    // Admissions per second never above the rate (plus one second of credit).
    const admissions = buyers.map((buyer) => buyer.admittedAt!).sort((a, b) => a - b);
    for (const [i, at] of admissions.entries()) expect(i + 1).toBeLessThanOrEqual(10 * ((at - start) / 1000 + 1) + 1);
    // The cap, not the rate, decided the pace: 30 buyers at 10/s would take 3 s.
    expect(elapsedS).toBeGreaterThan(3);
    expect((await roomState(sale.id)).shopping).toBe(0);
  }, 90_000);

  it('knows the stock: admits no more shoppers than units remain, and tells every waiting buyer sold_out at their next poll', async () => {
    const sale = await roomSale({ stock: 3, waitingRoom: { admitPerSecond: 100 } });
    const guests = await w.client.guests(12, 12);
    const buyers = guests.map((guest) => new RoomBuyer(w.client, sale.id, guest));
    await Promise.all(buyers.map((buyer) => buyer.join()));
    await sleep(1_100);
    await Promise.all(buyers.map((buyer) => buyer.poll()));
    const admitted = buyers.filter((buyer) => buyer.last?.state === 'admitted');
    expect(admitted).toHaveLength(3);
    expect((await roomState(sale.id)).shopping).toBe(3);
    for (const buyer of admitted) await buyer.buy(buyer.last!.pass!);
    expect(admitted.every((buyer) => buyer.orderNo)).toBe(true);
    const soldOutAt = Date.now();
    // Every waiting buyer's next poll at its advice says sold_out (the stock is read at most 0.5 s late).
    const answers = await Promise.all(
      buyers.filter((buyer) => !admitted.includes(buyer)).map(async (buyer) => buyer.walk({ buy: false })),
    );
    expect(answers.map((ticket) => ticket.state)).toEqual(answers.map(() => 'sold_out'));
    const notices = buyers
      .filter((buyer) => !admitted.includes(buyer))
      .map((buyer) => buyer.tickets.at(-1)!.at - soldOutAt);
    expect(Math.max(...notices)).toBeLessThan(2 * 10_000);
    // Joining a sold-out sale writes nothing.
    const [late] = await w.client.guests(1, 1);
    const joined = await new RoomBuyer(w.client, sale.id, late!).join();
    expect([joined.status, joined.body.state]).toEqual([201, 'sold_out']);
    expect((await roomState(sale.id)).waiting).toBe(9);
  }, 60_000);

  it("tokens only against a valid pass: missing, forged, expired or another buyer's pass is 403 ADMISSION_REQUIRED and writes nothing", async () => {
    const sale = await roomSale({ stock: 5, waitingRoom: { admitPerSecond: 100 } });
    const [holder, other] = await w.client.guests(2, 2);
    const buyer = new RoomBuyer(w.client, sale.id, holder!);
    const admitted = await buyer.walk({ buy: false });
    expect(admitted.state).toBe('admitted');
    expect(Date.parse(admitted.passExpiresAt!) - Date.now()).toBeGreaterThan(100_000);
    const codec = new AdmissionPassCodec(w.testEnv.env['JWT_SECRET']!);
    const [expiry, signature] = admitted.pass!.split('.');
    const cases: [string, Guest, unknown][] = [
      ['no pass', holder!, undefined],
      ['forged signature', holder!, `${expiry}.${'A'.repeat(signature!.length)}`],
      ['extended expiry', holder!, `${Number(expiry) + 60_000}.${signature}`],
      ['expired', holder!, codec.issue(sale.id, holder!.userId, Date.now() - 1)],
      ["another buyer's", other!, admitted.pass],
      ["another sale's", holder!, codec.issue('999999', holder!.userId, Date.now() + 60_000)],
    ];
    for (const [name, guest, pass] of cases) {
      const answer = await w.client.call('POST', `/api/sales/${sale.id}/tokens`, {
        token: guest.token,
        ...(pass === undefined ? {} : { json: { pass } }),
      });
      expect([name, answer.status, errorCode(answer)]).toEqual([name, 403, 'ADMISSION_REQUIRED']);
    }
    const keys = await w.stack.api
      .get<RedisClient>(REDIS_CLIENT)
      .keys(`${w.testEnv.env['REDIS_KEY_PREFIX']}:*:token:*`);
    expect(keys).toEqual([]);
    expect(await countRows(w.db, 'SELECT COUNT(*) AS n FROM orders WHERE sale_id = ?', [sale.id])).toBe(0);
    // The real pass buys.
    await buyer.buy(admitted.pass!);
    expect(buyer.orderNo).toBeDefined();
  }, 60_000);

  it('a poll sooner than half its advice is 429 with retry-after and changes nothing', async () => {
    const sale = await roomSale({ startsAt: inSeconds(30), waitingRoom: { admitPerSecond: 5 } });
    const [guest] = await w.client.guests(1, 1);
    const buyer = new RoomBuyer(w.client, sale.id, guest!);
    const joined = (await buyer.join()).body;
    expect(joined.pollAfterMs).toBeGreaterThanOrEqual(800);
    const tooSoon = await buyer.poll();
    expect([tooSoon.status, errorCode(tooSoon)]).toEqual([429, 'RATE_LIMITED']);
    expect(Number(tooSoon.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    await sleep(joined.pollAfterMs);
    expect((await buyer.poll()).status).toBe(200);
  }, 30_000);

  it('PATCH changes the rate live: the next admissions follow it; removing the room lets buyers straight to tokens', async () => {
    const sale = await roomSale({ stock: 200, waitingRoom: { admitPerSecond: 1 } });
    const guests = await w.client.guests(40, 20);
    const buyers = guests.map((guest) => new RoomBuyer(w.client, sale.id, guest));
    for (const buyer of buyers) await buyer.join();
    const admittedBy = async (ms: number) => {
      await sleep(ms);
      return (await roomState(sale.id)).admitted;
    };
    // Polls drive admission: keep everyone polling at their advice in the background.
    let polling = true;
    const pollers = Promise.all(buyers.map((buyer) => buyer.walk({ buy: false, until: () => !polling })));
    const slow = await admittedBy(3_000);
    expect(slow).toBeLessThanOrEqual(5);
    const patched = await w.client.call<Sale>('PATCH', `/api/admin/sales/${sale.id}`, {
      token: w.admin,
      json: { waitingRoom: { admitPerSecond: 50, maxShopping: 100 } },
    });
    expect(patched.body.waitingRoom).toEqual({ admitPerSecond: 50, maxShopping: 100, passSeconds: 120 });
    expect((await roomState(sale.id)).admitPerSecond).toBe(50);
    const fast = await admittedBy(4_000);
    polling = false;
    await pollers;
    expect(fast - slow).toBeGreaterThan(20);

    const removed = await w.client.call<Sale>('PATCH', `/api/admin/sales/${sale.id}`, {
      token: w.admin,
      json: { waitingRoom: null },
    });
    expect(removed.body.waitingRoom).toBeNull();
    const [walkIn] = await w.client.guests(1, 1);
    expect((await w.client.call('POST', `/api/sales/${sale.id}/tokens`, { token: walkIn!.token })).status).toBe(201);
    expect(errorCode(await w.client.call('POST', `/api/sales/${sale.id}/queue`, { token: walkIn!.token }))).toBe(
      'NO_WAITING_ROOM',
    );
  }, 60_000);

  it('works with buckets: a redis-lua sale spread over 3 buckets sells its stock exactly through the room', async () => {
    const sale = await roomSale({ stock: 6, buckets: 3, waitingRoom: { admitPerSecond: 50, maxShopping: 4 } });
    const guests = await w.client.guests(10, 10);
    const buyers = guests.map((guest) => new RoomBuyer(w.client, sale.id, guest));
    const tickets = await Promise.all(buyers.map((buyer) => buyer.walk({ buy: true })));
    expect(buyers.filter((buyer) => buyer.orderNo)).toHaveLength(6);
    // The others were told sold out, or admitted as the last units went and then refused.
    expect(tickets.filter((ticket) => ticket.state === 'sold_out').length).toBeGreaterThan(0);
    const audit = await w.client.call<{ ok: boolean; oversold: number }>('GET', `/api/admin/sales/${sale.id}/audit`, {
      token: w.admin,
    });
    expect(audit.body).toMatchObject({ oversold: 0 });
  }, 60_000);

  it('works with every strategy: a db-optimistic room sale sells through passes too', async () => {
    const sale = await roomSale({ strategy: 'db-optimistic', stock: 2, waitingRoom: { admitPerSecond: 50 } });
    const guests = await w.client.guests(4, 4);
    const buyers = guests.map((guest) => new RoomBuyer(w.client, sale.id, guest));
    const tickets = await Promise.all(buyers.map((buyer) => buyer.walk({ buy: true })));
    expect(buyers.filter((buyer) => buyer.orderNo)).toHaveLength(2);
    expect(tickets.filter((ticket: Ticket) => ticket.state === 'admitted')).toHaveLength(2);
    const audit = await w.client.call<{ ok: boolean; oversold: number }>('GET', `/api/admin/sales/${sale.id}/audit`, {
      token: w.admin,
    });
    expect(audit.body).toMatchObject({ ok: true, oversold: 0 });
  }, 60_000);
});
