import { OrderNumberGenerator } from '@flash-sale/domain';
import { HandoffSweep } from '../../apps/worker/src/lifecycle/handoff-sweep';
import { StockReconciliation } from '../../apps/worker/src/lifecycle/stock-reconciliation';
import { issueTestToken } from '../support/private-redis';
import { countRows, waitFor } from '../support/fixtures';
import { useLifecycleWorld } from './lifecycle-world';
import { buyerBucket } from '@flash-sale/redis';
import { OrdersQueue } from '@flash-sale/queue';

/** Hand-offs no nudge woke, a sale audited from MySQL alone, and a mixed run whose books must balance. */
describe('order recovery and reconciliation (real API, worker, MariaDB, Redis)', () => {
  const w = useLifecycleWorld();
  const { audit, available, buy, buyWritten, cancel, createSale, pay } = w;

  it('recovery: hand-offs no nudge woke (an API that died after the script) become orders; the audit tells QUEUED from lost', async () => {
    const saleId = await createSale(10);
    // A sale being sold (so it is in the active-sales index the sweep walks)…
    await buyWritten(saleId, await w.stack.client.guest());
    // The writer that wrote it keeps reading the sale's stream a moment longer (it gathers, then lingers):
    // the hand-offs below must come after its job ended, or it writes them and nothing is left to recover.
    const orders = w.stack.worker!.get(OrdersQueue).queue;
    await waitFor(
      'the writer done with the sale',
      () => orders.getJobCounts('waiting', 'active', 'delayed', 'prioritized'),
      (counts) => Object.values(counts).every((n) => n === 0),
    );
    const orderNumbers = new OrderNumberGenerator();
    const sale = await w.layout(saleId);
    // …where an API dies after its scripts: reserved through the real script, the writer never nudged.
    const orphans = await Promise.all(
      [1, 2, 3, 4].map(async (i) => {
        const { token } = await issueTestToken(w.saleRedis, sale, `orphan${i}`, 60);
        const result = await w.scripts.reserve({
          bucket: buyerBucket(sale, `orphan${i}`),
          userId: `orphan${i}`,
          submitToken: token,
          quantity: 1,
          orderNo: orderNumbers.next(saleId),
        });
        if (result.kind !== 'reserved') throw new Error('expected a reservation');
        return result.orderNo;
      }),
    );
    // Their hand-offs are in the stream: QUEUED, not lost.
    expect((await audit(saleId)).body).toMatchObject({ lostReservations: 0, ordersByStatus: { QUEUED: 4 } });
    // One hand-off really lost (deleted from the stream, as a Redis without persistence would): lost.
    const lostStream = w.keys.bucket(buyerBucket(sale, 'orphan4')).handoff;
    const entries = (await w.redis.xrange(lostStream, '-', '+')) as [string, string[]][];
    const lostEntry = entries.find(([, fields]) => fields[1]!.startsWith(`${orphans[3]}|`))!;
    await w.redis.xdel(lostStream, lostEntry[0]);
    expect((await audit(saleId)).body).toMatchObject({ lostReservations: 1, ok: false, ordersByStatus: { QUEUED: 3 } });
    // Put it back, so the rest of the suite sees a whole sale.
    await w.redis.xadd(lostStream, '*', 'r', lostEntry[1][1]!);

    expect(await w.stack.worker!.get(HandoffSweep).run()).toBe(1); // one sale with a backlog
    await waitFor(
      'recovered orders',
      () =>
        countRows(w.db, `SELECT COUNT(*) AS n FROM orders WHERE sale_id = ? AND status = 'PENDING_PAYMENT'`, [saleId]),
      (n) => n === 5,
    );
    expect(await countRows(w.db, `SELECT COUNT(*) AS n FROM orders WHERE order_no IN (?, ?, ?, ?)`, orphans)).toBe(4);
    await waitFor(
      'the stream emptied',
      () => w.handoff.backlog(sale),
      (n) => n === 0,
    );
    expect(await w.stack.worker!.get(HandoffSweep).run()).toBe(0); // nothing left to wake a writer for
    expect((await audit(saleId)).body).toMatchObject({ ok: true, lostReservations: 0, held: 5 });
  });

  it('an ended sale whose Redis keys expired (retention) is audited from MySQL alone: ok, nothing lost', async () => {
    const saleId = await createSale(3);
    await buyWritten(saleId, await w.stack.client.guest());
    const ended = await w.stack.client.call('PATCH', `/api/admin/sales/${saleId}`, {
      token: w.admin,
      json: { endsAt: new Date().toISOString() },
    });
    expect(ended.status).toBe(200);
    // What SALE_REDIS_RETENTION_MS does once it has passed.
    await w.saleRedis.reset(await w.layout(saleId));
    const body = (await audit(saleId)).body as Record<string, unknown>;
    expect(body).toMatchObject({ ok: true, retiredFromRedis: true, held: 1, lostReservations: 0, drift: 0 });
  });

  it('mixed run: buy, pay some, cancel some, let some expire, duplicate callbacks on → books balance, drift 0', async () => {
    const stock = 40;
    const saleId = await createSale(stock);
    const buyers = await w.stack.client.guests(50, 10);
    const purchases = await Promise.all(buyers.map((buyer) => buy(saleId, buyer)));
    const winners = buyers.flatMap((buyer, i) =>
      purchases[i]!.status === 202 ? [{ buyer, orderNo: purchases[i]!.body.orderNo }] : [],
    );
    expect(winners).toHaveLength(stock);
    await waitFor(
      'orders written',
      () => countRows(w.db, 'SELECT COUNT(*) AS n FROM orders WHERE sale_id = ?', [saleId]),
      (n) => n === stock,
    );
    // A third pay, a third cancel, a third is left to expire.
    await Promise.all(
      winners.map(({ buyer, orderNo }, i) =>
        i % 3 === 0 ? pay(buyer, orderNo) : i % 3 === 1 ? cancel(buyer, orderNo) : Promise.resolve(),
      ),
    );
    const ordersIn = (status: string) =>
      countRows(w.db, 'SELECT COUNT(*) AS n FROM orders WHERE sale_id = ? AND status = ?', [saleId, status]);
    const paidThird = winners.filter((_, i) => i % 3 === 0).length;
    await waitFor(
      'the paid third paid',
      () => ordersIn('PAID'),
      (n) => n === paidThird,
      20_000,
    );
    // The unpaid third's deadline passes now (its orders' own `expires_at`, which is all the expiry sweep
    // reads), not after a timeout short enough to catch a slow payment or cancel of the other thirds.
    await w.db.query(
      `UPDATE orders SET expires_at = NOW(3) - INTERVAL 1 SECOND WHERE sale_id = ? AND status = 'PENDING_PAYMENT'`,
      [saleId],
    );
    await waitFor(
      'the unpaid third to expire',
      () => countRows(w.db, `SELECT COUNT(*) AS n FROM orders WHERE sale_id = ? AND status = 'EXPIRED'`, [saleId]),
      (n) => n === winners.filter((_, i) => i % 3 === 2).length,
      20_000,
    );
    await new Promise((resolve) => setTimeout(resolve, 400)); // late duplicate callbacks land

    const paid = winners.filter((_, i) => i % 3 === 0).length;
    const { drifts } = await w.stack.worker!.get(StockReconciliation).run();
    expect(drifts.get(saleId)).toBe(0);
    const report = await audit(saleId);
    expect(report.body).toMatchObject({
      ok: true,
      oversold: 0,
      duplicateOrders: 0,
      lostReservations: 0,
      held: paid,
      drift: 0,
      lastReconciliation: { drift: 0 },
      ordersByStatus: {
        QUEUED: 0,
        PENDING_PAYMENT: 0,
        PAID: paid,
        CANCELLED: winners.filter((_, i) => i % 3 === 1).length,
        EXPIRED: winners.filter((_, i) => i % 3 === 2).length,
        FAILED: 0,
      },
    });
    // remaining + held + returned == stock: units never sold, units held by paid orders, and units
    // sold and given back (Redis' own ledger of releases), which are on sale again.
    const snapshot = await w.saleRedis.snapshot(await w.layout(saleId));
    const returned = [...snapshot.returned.values()].reduce((units, n) => units + n, 0);
    const neverSold = snapshot.remaining - returned;
    expect(returned).toBe(stock - paid);
    expect(neverSold).toBe(0);
    expect(neverSold + paid + returned).toBe(stock);
    expect(await available(saleId)).toBe(stock - paid);
  });
});
