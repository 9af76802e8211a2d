import { issueTestToken } from './support/private-redis';
import { OrderNumberGenerator } from '@flash-sale/domain';
import {
  createRedisClient,
  KeyBuilder,
  type RedisClient,
  ReservationScripts,
  SaleRedisRepository,
} from '@flash-sale/redis';
import type { DataSource } from 'typeorm';
import { signPaymentBody } from '../apps/api/src/payments/payment-signature';
import { OrderExpiry } from '../apps/worker/src/lifecycle/order-expiry';
import { HandoffSweep } from '../apps/worker/src/lifecycle/handoff-sweep';
import { StockReconciliation } from '../apps/worker/src/lifecycle/stock-reconciliation';
import { inBatches } from './support/api-client';
import { countRows, waitFor } from './support/fixtures';
import { startStack, type RunningStack } from './support/running-stack';
import { createTestEnv, openDatabase, type TestEnv } from './support/test-env';

interface OrderBody {
  orderNo: string;
  status: string;
  saleId: string;
  paidAt?: string;
}
interface ErrorBody {
  error: { code: string };
}
type Guest = { token: string; userId: string };

/** Payment, expiry, cancel, recovery and reconciliation, end to end on the real services. */
describe('order lifecycle (real API, worker, MariaDB, Redis)', () => {
  let testEnv: TestEnv;
  let db: DataSource;
  let redis: RedisClient;
  let stack: RunningStack;
  let admin: string;
  let saleRedis: SaleRedisRepository;
  let scripts: ReservationScripts;
  let keys: KeyBuilder;

  beforeAll(async () => {
    testEnv = await createTestEnv({
      // The simulated provider calls back late, three times, in random order.
      PAYMENT_CALLBACK_DELAY_MS: '20',
      PAYMENT_CALLBACK_JITTER_MS: '150',
      PAYMENT_CALLBACK_COPIES: '3',
      // Recovery and reconciliation are run by hand here, so their timing cannot make a test pass by
      // luck. The expiry sweep is the expiry mechanism itself: it runs on its schedule, a fast one.
      RECOVERY_INTERVAL_MS: '3600000',
      RECONCILE_INTERVAL_MS: '3600000',
      RECOVERY_GRACE_MS: '0',
      EXPIRY_SWEEP_INTERVAL_MS: '250',
    });
    db = await openDatabase(testEnv.config);
    redis = createRedisClient(testEnv.config.redis);
    keys = new KeyBuilder(testEnv.config.redis.keyPrefix);
    saleRedis = new SaleRedisRepository(redis, keys);
    scripts = new ReservationScripts(redis, keys);
    stack = await startStack(testEnv.config);
    admin = await stack.client.adminToken(testEnv.env['ADMIN_PASSWORD']!);
  });

  afterAll(async () => {
    await stack.close();
    redis.disconnect();
    await db.destroy();
    await testEnv.cleanup();
  });

  async function createSale(stock: number, paymentTimeoutSeconds = 600): Promise<string> {
    const response = await stack.client.call<{ id: string }>('POST', '/api/admin/sales', {
      token: admin,
      json: { name: 'Lifecycle sale', priceCents: 2500, stock, endsAt: new Date(Date.now() + 3_600_000).toISOString() },
    });
    expect(response.status).toBe(201);
    // Shorter than the API allows, so that expiry happens within the test.
    await db.query('UPDATE sales SET payment_timeout_seconds = ? WHERE id = ?', [
      paymentTimeoutSeconds,
      response.body.id,
    ]);
    return response.body.id;
  }

  async function buy(saleId: string, guest: Guest) {
    return stack.client.call<OrderBody | ErrorBody>('POST', `/api/sales/${saleId}/purchase`, {
      token: guest.token,
      json: { token: await stack.client.submitToken(saleId, guest.token) },
    });
  }

  /** Buys one unit and waits until the worker has written the order. */
  async function buyWritten(saleId: string, guest: Guest): Promise<string> {
    const response = await buy(saleId, guest);
    expect(response.status).toBe(202);
    const { orderNo } = response.body as OrderBody;
    await waitFor(
      `order ${orderNo} written`,
      () =>
        countRows(db, `SELECT COUNT(*) AS n FROM orders WHERE order_no = ? AND status = 'PENDING_PAYMENT'`, [orderNo]),
      (n) => n === 1,
    );
    return orderNo;
  }

  const pay = (guest: Guest, orderNo: string) =>
    stack.client.call<OrderBody | ErrorBody>('POST', `/api/orders/${orderNo}/pay`, { token: guest.token });
  const cancel = (guest: Guest, orderNo: string) =>
    stack.client.call<OrderBody | ErrorBody>('POST', `/api/orders/${orderNo}/cancel`, { token: guest.token });
  const statusOf = async (orderNo: string) =>
    ((await db.query('SELECT status FROM orders WHERE order_no = ?', [orderNo])) as { status: string }[])[0]?.status;
  /** Units MySQL has not handed to an order: unleased (`available`) plus leased to Redis and unsold. */
  const available = (saleId: string) =>
    countRows(db, 'SELECT available + leased AS n FROM sales WHERE id = ?', [saleId]);
  const audit = (saleId: string) =>
    stack.client.call<Record<string, unknown>>('GET', `/api/admin/sales/${saleId}/audit`, { token: admin });

  function signedCallback(body: object, secret = testEnv.config.payment.webhookSecret) {
    const raw = JSON.stringify(body);
    return stack.client.call<{ outcome: string } | ErrorBody>('POST', '/api/payments/callback', {
      rawBody: raw,
      headers: { 'x-payment-signature': signPaymentBody(raw, secret) },
    });
  }

  it('pay twice, and callbacks racing for one order → PAID once, one payment row', async () => {
    const saleId = await createSale(5);
    const buyer = await stack.client.guest();
    const orderNo = await buyWritten(saleId, buyer);

    const first = await pay(buyer, orderNo);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ orderNo, status: 'PAID', paidAt: expect.any(String) });
    const again = await pay(buyer, orderNo);
    expect(again.body).toEqual(first.body); // harmless repeat

    const [payment] = (await db.query(
      'SELECT out_trade_no, transaction_id, amount_cents FROM payments WHERE order_no = ?',
      [orderNo],
    )) as { out_trade_no: string; transaction_id: string; amount_cents: number }[];
    const callback = {
      outTradeNo: payment!.out_trade_no,
      transactionId: payment!.transaction_id,
      amountCents: payment!.amount_cents,
      status: 'SUCCESS',
    };
    const racing = await Promise.all(Array.from({ length: 8 }, () => signedCallback(callback)));
    expect(racing.map((response) => response.status)).toEqual(Array(8).fill(200));
    expect(racing.map((response) => (response.body as { outcome: string }).outcome)).toEqual(
      Array(8).fill('duplicate'),
    );

    // The provider's own late duplicates arrive too; none changes anything.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await countRows(db, 'SELECT COUNT(*) AS n FROM payments WHERE order_no = ?', [orderNo])).toBe(1);
    const [order] = (await db.query('SELECT status, version FROM orders WHERE order_no = ?', [orderNo])) as {
      status: string;
      version: number;
    }[];
    expect(order).toEqual({ status: 'PAID', version: 1 }); // moved exactly once
    expect(await available(saleId)).toBe(4);
  });

  it('a callback with a bad signature → 401, nothing changes', async () => {
    const saleId = await createSale(5);
    const buyer = await stack.client.guest();
    const orderNo = await buyWritten(saleId, buyer);
    await db.query(
      `INSERT INTO payments (order_no, out_trade_no, amount_cents, status) VALUES (?, ?, 2500, 'PENDING')`,
      [orderNo, `PAY-${orderNo}`],
    );
    const body = { outTradeNo: `PAY-${orderNo}`, transactionId: 'txn_forged', amountCents: 2500, status: 'SUCCESS' };
    const forged = await signedCallback(body, 'not-the-secret');
    expect(forged.status).toBe(401);
    expect((forged.body as ErrorBody).error.code).toBe('INVALID_SIGNATURE');
    const unsigned = await stack.client.call('POST', '/api/payments/callback', { json: body });
    expect(unsigned.status).toBe(401);
    expect(await statusOf(orderNo)).toBe('PENDING_PAYMENT');
    expect(
      await countRows(db, `SELECT COUNT(*) AS n FROM payments WHERE order_no = ? AND transaction_id IS NULL`, [
        orderNo,
      ]),
    ).toBe(1);
  });

  it('expiry returns the unit to MySQL and Redis once; paying afterwards → 409 INVALID_TRANSITION', async () => {
    const saleId = await createSale(2, 1);
    const buyer = await stack.client.guest();
    const orderNo = await buyWritten(saleId, buyer);
    expect(await saleRedis.remaining(saleId)).toBe(1);
    await waitFor(
      'the expiry sweep',
      () => statusOf(orderNo),
      (status) => status === 'EXPIRED',
      20_000,
    );
    await waitFor(
      'the unit back in Redis',
      () => saleRedis.remaining(saleId),
      (n) => n === 2,
      5_000,
    );
    expect(await available(saleId)).toBe(2);

    const late = await pay(buyer, orderNo);
    expect(late.status).toBe(409);
    expect((late.body as ErrorBody).error.code).toBe('INVALID_TRANSITION');
    // Sweeping again gives nothing back twice.
    expect(await stack.worker!.get(OrderExpiry).sweep()).toBe(0);
    expect(await saleRedis.remaining(saleId)).toBe(2);
    expect(await available(saleId)).toBe(2);
    // The buyer's slot is free again.
    expect((await buy(saleId, buyer)).status).toBe(202);
  });

  it('cancel racing payment on 30 orders → exactly one wins each, stock conserved', async () => {
    const saleId = await createSale(30);
    const buyers = await inBatches(
      Array.from({ length: 30 }, (_, i) => i),
      10,
      () => stack.client.guest(),
    );
    const orderNos = await inBatches(buyers, 10, (buyer) => buyWritten(saleId, buyer));

    const results = await Promise.all(
      orderNos.map((orderNo, i) => Promise.all([pay(buyers[i]!, orderNo), cancel(buyers[i]!, orderNo)])),
    );
    let paid = 0;
    for (const [i, [payment, cancelled]] of results.entries()) {
      const status = await statusOf(orderNos[i]!);
      expect(['PAID', 'CANCELLED']).toContain(status);
      if (status === 'PAID') {
        paid += 1;
        expect(payment.status).toBe(200);
        expect(cancelled.status).toBe(409);
      } else {
        expect(payment.status).toBe(409);
        expect(cancelled.status).toBe(200);
      }
    }
    expect(await available(saleId)).toBe(30 - paid);
    expect(await saleRedis.remaining(saleId)).toBe(30 - paid);
    const report = await audit(saleId);
    expect(report.body).toMatchObject({ ok: true, held: paid, drift: 0 });
  });

  it('the sweep racing payment on 30 overdue orders → exactly one wins each; nothing expires before its deadline', async () => {
    const saleId = await createSale(31);
    const buyers = await inBatches(
      Array.from({ length: 31 }, (_, i) => i),
      10,
      () => stack.client.guest(),
    );
    const orderNos = await inBatches(buyers, 10, (buyer) => buyWritten(saleId, buyer));
    const [notDue, ...overdue] = orderNos;
    const expiry = stack.worker!.get(OrderExpiry);
    expect(await expiry.sweep()).toBe(0); // 600 s to pay: nothing is due yet

    // 30 deadlines pass at once; payments, a sweep run by hand and the scheduled sweep all race for them.
    await db.query(`UPDATE orders SET expires_at = ? WHERE order_no IN (${overdue.map(() => '?').join(', ')})`, [
      new Date(Date.now() - 1_000),
      ...overdue,
    ]);
    const [payments] = await Promise.all([
      Promise.all(overdue.map((orderNo, i) => pay(buyers[i + 1]!, orderNo))),
      expiry.sweep(),
    ]);
    await waitFor(
      'every overdue order paid or expired',
      () =>
        countRows(db, `SELECT COUNT(*) AS n FROM orders WHERE sale_id = ? AND status = 'PENDING_PAYMENT'`, [saleId]),
      (n) => n === 1,
    );
    let paid = 0;
    for (const [i, orderNo] of overdue.entries()) {
      const status = await statusOf(orderNo);
      expect(['PAID', 'EXPIRED']).toContain(status);
      if (status === 'PAID') paid += 1;
      expect(payments[i]!.status).toBe(status === 'PAID' ? 200 : 409);
    }
    expect(await statusOf(notDue!)).toBe('PENDING_PAYMENT');
    // Units held: the paid ones and the order not yet due; every expired one came back exactly once.
    const held = paid + 1;
    await waitFor(
      'expired units back in Redis',
      () => saleRedis.remaining(saleId),
      (n) => n === 31 - held,
      5_000,
    );
    expect(await available(saleId)).toBe(31 - held);
    expect(await expiry.sweep()).toBe(0);
    expect(await saleRedis.remaining(saleId)).toBe(31 - held);
    expect((await audit(saleId)).body).toMatchObject({ ok: true, held, drift: 0 });
  });

  it('cancel → another user can buy that very unit; the canceller can buy again', async () => {
    const saleId = await createSale(1);
    const [alice, bob] = [await stack.client.guest('Alice'), await stack.client.guest('Bob')];
    const aliceOrder = await buyWritten(saleId, alice);
    expect((await buy(saleId, bob)).status).toBe(410);

    expect((await cancel(bob, aliceOrder)).status).toBe(404); // not Bob's
    const cancelled = await cancel(alice, aliceOrder);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ orderNo: aliceOrder, status: 'CANCELLED' });
    expect((await pay(alice, aliceOrder)).status).toBe(409);

    const bobOrder = await buyWritten(saleId, bob);
    expect((await buy(saleId, alice)).status).toBe(410); // sold out again: Bob has the unit
    expect((await cancel(bob, bobOrder)).status).toBe(200);
    await buyWritten(saleId, alice); // the canceller buys again
    expect(await available(saleId)).toBe(0);
    expect((await audit(saleId)).body).toMatchObject({ ok: true, held: 1, drift: 0 });
  });

  it('recovery: hand-offs no nudge woke (an API that died after the script) become orders; the audit tells QUEUED from lost', async () => {
    const saleId = await createSale(10);
    // A sale being sold (so it is in the active-sales index the sweep walks)…
    await buyWritten(saleId, await stack.client.guest());
    const orderNumbers = new OrderNumberGenerator();
    // …where an API dies after its scripts: reserved through the real script, the writer never nudged.
    const orphans = await Promise.all(
      [1, 2, 3, 4].map(async (i) => {
        const { token } = await issueTestToken(saleRedis, saleId, `orphan${i}`, 60);
        const result = await scripts.reserve({
          saleId,
          userId: `orphan${i}`,
          token,
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
    const entries = (await redis.xrange(keys.sale(saleId).handoff, '-', '+')) as [string, string[]][];
    const lostEntry = entries.find(([, fields]) => fields[1]!.startsWith(`${orphans[3]}|`))!;
    await redis.xdel(keys.sale(saleId).handoff, lostEntry[0]);
    expect((await audit(saleId)).body).toMatchObject({ lostReservations: 1, ok: false, ordersByStatus: { QUEUED: 3 } });
    // Put it back, so the rest of the suite sees a whole sale.
    await redis.xadd(keys.sale(saleId).handoff, '*', 'r', lostEntry[1][1]!);

    expect(await stack.worker!.get(HandoffSweep).run()).toBe(1); // one sale with a backlog
    await waitFor(
      'recovered orders',
      () =>
        countRows(db, `SELECT COUNT(*) AS n FROM orders WHERE sale_id = ? AND status = 'PENDING_PAYMENT'`, [saleId]),
      (n) => n === 5,
    );
    expect(await countRows(db, `SELECT COUNT(*) AS n FROM orders WHERE order_no IN (?, ?, ?, ?)`, orphans)).toBe(4);
    await waitFor(
      'the stream emptied',
      () => saleRedis.handoffBacklog(saleId),
      (n) => n === 0,
    );
    expect(await stack.worker!.get(HandoffSweep).run()).toBe(0); // nothing left to wake a writer for
    expect((await audit(saleId)).body).toMatchObject({ ok: true, lostReservations: 0, held: 5 });
  });

  it('an ended sale whose Redis keys expired (retention) is audited from MySQL alone: ok, nothing lost', async () => {
    const saleId = await createSale(3);
    await buyWritten(saleId, await stack.client.guest());
    const ended = await stack.client.call('PATCH', `/api/admin/sales/${saleId}`, {
      token: admin,
      json: { endsAt: new Date().toISOString() },
    });
    expect(ended.status).toBe(200);
    // What SALE_REDIS_RETENTION_MS does once it has passed.
    await redis.del(...keys.sale(saleId).all());
    const body = (await audit(saleId)).body as Record<string, unknown>;
    expect(body).toMatchObject({ ok: true, retiredFromRedis: true, held: 1, lostReservations: 0, drift: 0 });
  });

  it('mixed run: buy, pay some, cancel some, let some expire, duplicate callbacks on → books balance, drift 0', async () => {
    const stock = 40;
    const saleId = await createSale(stock, 2);
    const buyers = await inBatches(
      Array.from({ length: 50 }, (_, i) => i),
      10,
      () => stack.client.guest(),
    );
    const purchases = await Promise.all(buyers.map((buyer) => buy(saleId, buyer)));
    const winners = buyers.flatMap((buyer, i) =>
      purchases[i]!.status === 202 ? [{ buyer, orderNo: (purchases[i]!.body as OrderBody).orderNo }] : [],
    );
    expect(winners).toHaveLength(stock);
    await waitFor(
      'orders written',
      () => countRows(db, 'SELECT COUNT(*) AS n FROM orders WHERE sale_id = ?', [saleId]),
      (n) => n === stock,
    );
    // A third pay, a third cancel, a third is left to expire.
    await Promise.all(
      winners.map(({ buyer, orderNo }, i) =>
        i % 3 === 0 ? pay(buyer, orderNo) : i % 3 === 1 ? cancel(buyer, orderNo) : Promise.resolve(),
      ),
    );
    await waitFor(
      'the unpaid third to expire',
      () => countRows(db, `SELECT COUNT(*) AS n FROM orders WHERE sale_id = ? AND status = 'EXPIRED'`, [saleId]),
      (n) => n === winners.filter((_, i) => i % 3 === 2).length,
      20_000,
    );
    await new Promise((resolve) => setTimeout(resolve, 400)); // late duplicate callbacks land

    const paid = winners.filter((_, i) => i % 3 === 0).length;
    const { drifts } = await stack.worker!.get(StockReconciliation).run();
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
    const snapshot = await saleRedis.snapshot(saleId);
    const returned = [...snapshot.returned.values()].reduce((units, n) => units + n, 0);
    const neverSold = snapshot.remaining - returned;
    expect(returned).toBe(stock - paid);
    expect(neverSold).toBe(0);
    expect(neverSold + paid + returned).toBe(stock);
    expect(await available(saleId)).toBe(stock - paid);
  });
});
