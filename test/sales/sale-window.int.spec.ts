import { bucketsOf } from '@flash-sale/redis';
import type { ApiResponse, PurchaseAnswer } from '../support/api-client';
import { StockReconciliation } from '../../apps/worker/src/lifecycle/stock-reconciliation';
import { startStack } from '../support/running-stack';
import { useStackWorld } from '../support/stack-world';

const HOUR = 3_600_000;

/**
 * A sale's window lives in MySQL and, copied, in Redis, which judges it on every purchase. An admin's
 * edit of it is applied to both or refused whole, so no purchase is accepted after the end MySQL
 * records at that moment — not even when Redis is down during the edit and comes back with its data
 * (docs/failure-model.md "A sale's window").
 */
describe('a sale window edited while Redis is down (private redis-server, real MariaDB)', () => {
  const w = useStackWorld({
    redis: 'private',
    database: true,
    saleRedis: true,
    // Reconciliation runs only when a test says so: the edit alone must keep the promise.
    env: { RECONCILE_INTERVAL_MS: String(HOUR), IDLE_SALE_CHECK_INTERVAL_MS: String(HOUR) },
  });

  async function mysqlEndsAt(saleId: string): Promise<number> {
    const [row] = (await w.db.query('SELECT ends_at FROM sales WHERE id = ?', [saleId])) as { ends_at: Date }[];
    return new Date(row!.ends_at).getTime();
  }

  async function mysqlWindow(saleId: string): Promise<{ endsAt: number; version: number }> {
    const [row] = (await w.db.query('SELECT ends_at, window_version FROM sales WHERE id = ?', [saleId])) as {
      ends_at: Date;
      window_version: number;
    }[];
    return { endsAt: new Date(row!.ends_at).getTime(), version: Number(row!.window_version) };
  }

  /** Every key of the sale as it is now, to put back after a restart (Redis back with its data). */
  async function copyOfSale(saleId: string, buckets: number): Promise<{ key: string; dump: Buffer | null }[]> {
    const all = bucketsOf({ id: saleId, buckets }).flatMap((bucket) => w.keys.bucket(bucket).all());
    return Promise.all(all.map(async (key) => ({ key, dump: await w.redis.dumpBuffer(key) })));
  }

  /** A buyer holding a submit token of the sale, issued while it sells. */
  async function buyerWithToken(saleId: string): Promise<{ guest: string; token: string }> {
    const guest = await w.client.guest();
    return { guest: guest.token, token: await w.client.submitToken(saleId, guest.token) };
  }

  async function purchase(
    saleId: string,
    buyer: { guest: string; token: string },
  ): Promise<ApiResponse<PurchaseAnswer>> {
    return w.client.call<PurchaseAnswer>('POST', `/api/sales/${saleId}/purchase`, {
      token: buyer.guest,
      json: { token: buyer.token },
    });
  }

  function patch(saleId: string, endsAt: Date, client = w.client): Promise<ApiResponse<{ status: string }>> {
    return client.call<{ status: string }>('PATCH', `/api/admin/sales/${saleId}`, {
      token: w.admin,
      json: { endsAt: endsAt.toISOString() },
    });
  }

  /** The window each of the sale's buckets holds in Redis. */
  async function redisWindows(saleId: string, buckets: number): Promise<{ startsAtMs: number; endsAtMs: number }[]> {
    return Promise.all(
      bucketsOf({ id: saleId, buckets }).map(async (bucket) => {
        const [startsAtMs, endsAtMs] = await w.redis.hmget(w.keys.bucket(bucket).meta, 'startsAtMs', 'endsAtMs');
        return { startsAtMs: Number(startsAtMs), endsAtMs: Number(endsAtMs) };
      }),
    );
  }

  it('refuses "end now" whole while Redis is down: no purchase is accepted after the end MySQL records', async () => {
    const sale = await w.client.createSale(w.admin, { name: 'Ends early', stock: 50 });
    expect((await purchase(sale.id, await buyerWithToken(sale.id))).status).toBe(202);
    // Buyers who took their token while the sale was selling, and buy later.
    const buyers = await Promise.all(Array.from({ length: 6 }, () => buyerWithToken(sale.id)));
    const copy = await copyOfSale(sale.id, sale.buckets);

    await w.redisServer.kill();
    const ended = await w.client.call('PATCH', `/api/admin/sales/${sale.id}`, {
      token: w.admin,
      json: { endsAt: new Date().toISOString() },
    });
    expect(ended.status).toBe(503);

    // Redis comes back with its data.
    await w.redisServer.restart();
    for (const { key, dump } of copy) if (dump) await w.redis.restore(key, 0, dump, 'REPLACE');
    // What Redis judges purchases by never reaches past MySQL's end.
    for (const window of await redisWindows(sale.id, sale.buckets)) {
      expect(window.endsAtMs).toBeLessThanOrEqual(await mysqlEndsAt(sale.id));
    }

    // Every purchase accepted now must have been sent before the end MySQL holds when it is answered.
    const late: { sentAt: number; endsAt: number; status: number }[] = [];
    const deadline = Date.now() + 30_000;
    for (const buyer of buyers.slice(0, 3)) {
      for (;;) {
        const sentAt = Date.now();
        const answer = await purchase(sale.id, buyer);
        const endsAt = await mysqlEndsAt(sale.id);
        if ((answer.status === 202 || answer.status === 201) && sentAt >= endsAt) {
          late.push({ sentAt, endsAt, status: answer.status });
        }
        if (answer.status !== 503 || Date.now() > deadline) break;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
    expect(late).toEqual([]);

    // The admin tries again once Redis is back: now the sale ends, in MySQL and Redis at once.
    const again = await w.client.call<{ status: string }>('PATCH', `/api/admin/sales/${sale.id}`, {
      token: w.admin,
      json: { endsAt: new Date().toISOString() },
    });
    expect(again.status).toBe(200);
    expect(again.body.status).toBe('ended');
    for (const buyer of buyers.slice(3)) {
      const after = await purchase(sale.id, buyer);
      expect(after.status).toBe(410);
      expect(after.body.error?.code).toBe('SALE_ENDED');
    }
  });

  it('refuses a reopen whole while Redis is down, and takes it once Redis is back', async () => {
    const sale = await w.client.createSale(w.admin, { name: 'Reopens', stock: 20 });
    const buyers = await Promise.all(Array.from({ length: 2 }, () => buyerWithToken(sale.id)));
    const ended = await patch(sale.id, new Date());
    expect(ended.status).toBe(200);
    const endedAt = await mysqlEndsAt(sale.id);
    const copy = await copyOfSale(sale.id, sale.buckets);

    await w.redisServer.kill();
    expect((await patch(sale.id, new Date(Date.now() + HOUR))).status).toBe(503);
    expect(await mysqlEndsAt(sale.id)).toBe(endedAt);
    await w.redisServer.restart();
    for (const { key, dump } of copy) if (dump) await w.redis.restore(key, 0, dump, 'REPLACE');

    const reopened = await patch(sale.id, new Date(Date.now() + HOUR));
    expect(reopened.status).toBe(200);
    expect(reopened.body.status).toBe('live');
    const endsAt = await mysqlEndsAt(sale.id);
    expect(await redisWindows(sale.id, sale.buckets)).toEqual(
      Array.from({ length: sale.buckets }, () => expect.objectContaining({ endsAtMs: endsAt })),
    );
    expect((await purchase(sale.id, buyers[0]!)).status).toBe(202);
  });

  it('never lets Redis judge by a later end than MySQL, with two API processes ending and reopening at once', async () => {
    const second = await startStack(w.testEnv.config, { worker: false });
    const sale = await w.client.createSale(w.admin, { name: 'Contested', stock: 20, buckets: 2 });
    let editing = true;
    const seen: { redisEnd: number; mysqlEnds: number[] }[] = [];
    // MySQL, Redis, MySQL again: with at most one edit committed in between (versions), the end Redis
    // held is at most the later of the two MySQL held — an edit narrows Redis before MySQL, widens it after.
    const watcher = (async () => {
      while (editing) {
        const before = await mysqlWindow(sale.id);
        const redisEnd = Math.max(...(await redisWindows(sale.id, 2)).map((window) => window.endsAtMs));
        const after = await mysqlWindow(sale.id);
        if (after.version - before.version <= 1) seen.push({ redisEnd, mysqlEnds: [before.endsAt, after.endsAt] });
      }
    })();
    const answers: number[] = [];
    for (let round = 0; round < 8; round++) {
      const [end, reopen] = await Promise.all([
        patch(sale.id, new Date(), w.client),
        patch(sale.id, new Date(Date.now() + HOUR), second.client),
      ]);
      answers.push(end.status, reopen.status);
    }
    editing = false;
    await watcher;
    await second.close();
    expect(answers.every((status) => status === 200)).toBe(true);
    expect(seen.length).toBeGreaterThan(10);
    expect(seen.filter((sample) => sample.redisEnd > Math.max(...sample.mysqlEnds))).toEqual([]);
    // Both edits answered: Redis holds exactly MySQL's window, with no reconciliation.
    const endsAt = await mysqlEndsAt(sale.id);
    for (const window of await redisWindows(sale.id, 2)) expect(window.endsAtMs).toBe(endsAt);
  });

  it('reconciliation brings a copy of the window that differs from MySQL back in line, either way', async () => {
    const reconciliation = w.stack.worker!.get(StockReconciliation);
    // Started a while ago, so that MySQL can end it a second ago (its window check wants the end after the start).
    const sale = await w.client.createSale(w.admin, {
      name: 'Drifted window',
      stock: 20,
      buckets: 3,
      startsAt: new Date(Date.now() - HOUR).toISOString(),
    });
    const buyers = await Promise.all(Array.from({ length: 2 }, () => buyerWithToken(sale.id)));

    // MySQL ended the sale and Redis never heard of it (as an edit on a build without the window lock).
    await w.db.query('UPDATE sales SET ends_at = ? WHERE id = ?', [new Date(Date.now() - 1_000), sale.id]);
    await reconciliation.run();
    const endsAt = await mysqlEndsAt(sale.id);
    for (const window of await redisWindows(sale.id, 3)) expect(window.endsAtMs).toBe(endsAt);
    expect((await purchase(sale.id, buyers[0]!)).body.error?.code).toBe('SALE_ENDED');

    // Reopened in MySQL; Redis holds a narrower copy (an edit refused half way): the idle check repairs it.
    const later = new Date(Date.now() + HOUR);
    await w.db.query('UPDATE sales SET ends_at = ? WHERE id = ?', [later, sale.id]);
    await reconciliation.checkIdleSales();
    for (const window of await redisWindows(sale.id, 3)) expect(window.endsAtMs).toBe(later.getTime());
    expect((await purchase(sale.id, buyers[1]!)).status).toBe(202);
  });
});
