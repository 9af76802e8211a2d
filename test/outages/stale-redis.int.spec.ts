import { bucketsOf, createRedisClient, KeyBuilder } from '@flash-sale/redis';
import { StockReconciliation } from '../../apps/worker/src/lifecycle/stock-reconciliation';
import { waitFor } from '../support/fixtures';
import { type StackWorld, useStackWorld } from '../support/stack-world';

/** A purchase's answer as these tests read it. */
type Answer = { status: number; body: { orderNo?: string } };

/**
 * `count` new buyers at once, each with a fresh submit token, buying as the storefront does (a `503` +
 * retry-after, "nothing happened", is sent again); their user ids and answers.
 */
async function burst(w: StackWorld, saleId: string, count: number): Promise<{ userId: string; answer: Answer }[]> {
  return Promise.all(
    Array.from({ length: count }, async () => {
      const guest = await w.client.guest();
      const token = await w.client.submitToken(saleId, guest.token);
      const answer = await w.client.purchaseAsStorefront<{ orderNo?: string }>(saleId, guest.token, token);
      return { userId: guest.userId, answer };
    }),
  );
}

/** Every key of the sale (each of its buckets) as Redis holds it now: the copy Redis will come back with. */
async function copyOfSale(w: StackWorld, sale: { id: string; buckets: number }) {
  const keyBuilder = new KeyBuilder(w.testEnv.config.redis.keyPrefix);
  const keys = bucketsOf(sale).flatMap((bucket) => keyBuilder.bucket(bucket).all());
  const client = createRedisClient(w.testEnv.config.redis);
  const copy = await Promise.all(keys.map(async (key) => ({ key, dump: await client.dumpBuffer(key) })));
  client.disconnect();
  return copy;
}

/** Redis SIGKILLed and started again, with `copy` restored over whatever it came back with. */
async function restartFromCopy(w: StackWorld, copy: Awaited<ReturnType<typeof copyOfSale>>): Promise<void> {
  await w.redisServer.kill();
  await w.redisServer.restart();
  const restorer = createRedisClient(w.testEnv.config.redis);
  for (const { key, dump } of copy) if (dump) await restorer.restore(key, 0, dump, 'REPLACE');
  restorer.disconnect();
}

/**
 * The world of a stale-copy test: the file's own redis-server, which the test kills and restores a copy
 * into, and the database to count the sale's orders in. A lost incarnation's units are settled half a
 * second after the loss; `env` adds the file's leases and repair intervals.
 */
function useStaleCopyWorld(env: Record<string, string>): StackWorld {
  return useStackWorld({ redis: 'private', database: true, env: { RECOVERY_GRACE_MS: '500', ...env } });
}

/** Order rows of the sale, any status. */
async function ordersWritten(w: StackWorld, saleId: string): Promise<number> {
  return Number((await w.db.query('SELECT COUNT(*) AS n FROM orders WHERE sale_id = ?', [saleId]))[0].n);
}

/**
 * Redis comes back with a stale copy of a sale (an old AOF, a replica that lagged): its balance
 * counts units MySQL has since seen sold. It must never sell them (no phantom stock): the sale's
 * incarnation is checked before selling again, the copy is found stale, and the next incarnation
 * sells only fresh leases; reconciliation then settles the old one by itself.
 */
describe('Redis restored from a stale copy (private redis-server, real MariaDB)', () => {
  const w = useStaleCopyWorld({
    LEASE_SIZE: '30',
    LEASE_LOW_WATER: '5',
    // Reconciliation runs when the test says so: the purchase path alone must refuse the stale copy.
    RECONCILE_INTERVAL_MS: '3600000',
  });

  it('sells no unit twice after a stale restore, and closes the books without an admin', async () => {
    const { stack, db, admin } = w;
    const sale = await stack.client.createSale(admin, { name: 'Stale', priceCents: 100, stock: 100 });
    const saleId = sale.id;
    const buyers: { userId: string; orderNo: string }[] = [];
    const buy = async (count: number) => {
      for (const { userId, answer } of await burst(w, saleId, count)) {
        if (answer.status === 202) buyers.push({ userId, orderNo: answer.body.orderNo! });
      }
    };
    const written = () => ordersWritten(w, saleId);

    await buy(20);
    await waitFor('20 written', written, (n) => n === 20);
    const copy = await copyOfSale(w, sale);
    await buy(20);
    await waitFor('40 written', written, (n) => n === 40);
    await restartFromCopy(w, copy);

    // 80 buyers for the 60 units left. The stale copy's balance still counts 20 units sold since.
    await buy(80);
    expect(buyers.length).toBeLessThanOrEqual(100);
    await waitFor('every 202 written', written, (n) => n === buyers.length);
    const failed = await db.query(`SELECT COUNT(*) AS n FROM orders WHERE sale_id = ? AND status = 'FAILED'`, [saleId]);
    expect(Number(failed[0].n)).toBe(0);
    // The copy was refused: the sale sells on a later incarnation (2, or 3 when the worker's reconciliation
    // ran against the empty Redis before the copy was restored — then the copy's epoch is older still).
    const [row] = (await db.query('SELECT redis_epoch FROM sales WHERE id = ?', [saleId])) as {
      redis_epoch: number;
    }[];
    expect(Number(row!.redis_epoch)).toBeGreaterThanOrEqual(2);

    // Reconciliation (normally every RECONCILE_INTERVAL_MS) settles the lost incarnation; the rest sells.
    const reconciliation = stack.worker!.get(StockReconciliation);
    await waitFor(
      'the in-doubt units settled',
      async () => {
        await reconciliation.reconcile(saleId);
        return Number((await db.query('SELECT in_doubt AS n FROM sales WHERE id = ?', [saleId]))[0].n);
      },
      (inDoubt) => inDoubt === 0,
      10_000,
    );
    await buy(100 - buyers.length + 10);
    expect(buyers).toHaveLength(100);
    await waitFor('all 100 written', written, (n) => n === 100);
    const rows = (await db.query(
      `SELECT order_no, user_id FROM orders WHERE sale_id = ? AND status = 'PENDING_PAYMENT'`,
      [saleId],
    )) as { order_no: string; user_id: string }[];
    const owner = new Map(rows.map((r) => [r.order_no, r.user_id]));
    expect(buyers.filter((buyer) => owner.get(buyer.orderNo) !== buyer.userId)).toEqual([]);
    const audit = await stack.client.call<{ ok: boolean; oversold: number; drift: number }>(
      'GET',
      `/api/admin/sales/${saleId}/audit`,
      { token: admin },
    );
    expect(audit.body).toMatchObject({ ok: true, oversold: 0, drift: 0 });
  });
});

/**
 * The same stale copy arriving after the sale has ended (a lagging replica promoted once the admin ended
 * it). The sale sells nothing more, yet the copy is not harmless: it lacks reservations MySQL has written
 * and counts units MySQL no longer leases to it, so the books and the audit read a balance that is not
 * there. The worker's periodic checks alone (no activity mark, no admin) must replace it and close the books.
 */
describe('Redis restored from a stale copy after the sale ended (private redis-server, real MariaDB)', () => {
  const w = useStaleCopyWorld({
    LEASE_SIZE: '10',
    LEASE_LOW_WATER: '2',
    RECONCILE_INTERVAL_MS: '1000',
    IDLE_SALE_CHECK_INTERVAL_MS: '1000',
  });

  it('never sells on the copy, and replaces it so that Redis and MySQL agree again', async () => {
    const { stack, db, admin } = w;
    const sale = await stack.client.createSale(admin, {
      name: 'Stale after end',
      priceCents: 100,
      stock: 40,
      buckets: 3,
    });
    const saleId = sale.id;
    const accepted: string[] = [];
    const buy = async (count: number) => {
      for (const { answer } of await burst(w, saleId, count))
        if (answer.status === 202) accepted.push(answer.body.orderNo!);
    };
    const written = () => ordersWritten(w, saleId);

    await buy(15);
    await waitFor('15 written', written, (n) => n === 15);
    const copy = await copyOfSale(w, sale);
    await buy(15);
    await waitFor('30 written', written, (n) => n === accepted.length);
    expect(accepted).toHaveLength(30);
    // Buyers who fetched a submit token before the end, and send it after.
    const lateBuyers = await Promise.all(
      Array.from({ length: 10 }, async () => {
        const guest = await stack.client.guest();
        return { guest, token: await stack.client.submitToken(saleId, guest.token) };
      }),
    );

    const ended = await stack.client.call('PATCH', `/api/admin/sales/${saleId}`, {
      token: admin,
      json: { endsAt: new Date().toISOString() },
    });
    expect(ended.status).toBe(200);
    // The copy comes back at once, its window still the one from before the end.
    await restartFromCopy(w, copy);

    const late = await Promise.all(
      lateBuyers.map(({ guest, token }) => stack.client.purchaseAsStorefront(saleId, guest.token, token)),
    );
    expect(late.filter((answer) => answer.status === 202)).toEqual([]);

    const audit = await waitFor(
      'the books closed on the replaced copy',
      async () =>
        (
          await stack.client.call<{
            ok: boolean;
            drift: number;
            duplicateOrders: number;
            books: { redisBalance: number; mysqlLeased: number; inDoubt: number };
          }>('GET', `/api/admin/sales/${saleId}/audit`, { token: admin })
        ).body,
      (body) => body.ok && body.books.inDoubt === 0,
      20_000,
    );
    expect(audit).toMatchObject({ ok: true, drift: 0, duplicateOrders: 0 });
    // No unit leased without a reservation: what Redis could still sell is what MySQL still leases to it.
    expect(audit.books.redisBalance).toBe(audit.books.mysqlLeased - audit.books.inDoubt);
    const [row] = (await db.query('SELECT available, leased, in_doubt FROM sales WHERE id = ?', [saleId])) as {
      available: number;
      leased: number;
      in_doubt: number;
    }[];
    expect(Number(row!.available) + Number(row!.leased)).toBe(10);
  });
});
