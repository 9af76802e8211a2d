import { createRedisClient } from '@flash-sale/redis';
import { waitFor } from '../support/fixtures';
import { freePort } from '../../scripts/lib/ports.mjs';
import { PrivateRedisServer } from '../support/private-redis';
import { useStackWorld } from '../support/stack-world';

/** The value of one exact series (`name{labels}`) in Prometheus text, or undefined when absent. */
function sample(metrics: string, series: string): number | undefined {
  const line = metrics.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

const QUEUE_STATES = ['waiting', 'active', 'delayed', 'failed'];

describe('Prometheus metrics of the API and the worker (real Redis, MariaDB, BullMQ)', () => {
  const w = useStackWorld({ env: async () => ({ WORKER_METRICS_PORT: String(await freePort()) }) });
  const scrape = async () => (await w.client.raw('GET', '/metrics')).text;

  it('after one purchase, /metrics exposes every series: outcomes, script latency, queue depth, defaults', async () => {
    const { client, admin } = w;
    const sale = await client.createSale(admin, { name: 'Metered', priceCents: 100, stock: 5 });
    const buyer = await client.guest();
    const token = await client.submitToken(sale.id, buyer.token);
    const purchase = () =>
      client.call<{ orderNo: string }>('POST', `/api/sales/${sale.id}/purchase`, {
        token: buyer.token,
        json: { token },
      });
    const accepted = await purchase();
    expect(accepted.status).toBe(202);

    const scrape = await client.raw('GET', '/metrics');
    expect(scrape.status).toBe(200);
    expect(scrape.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    const metrics = scrape.text;
    expect(sample(metrics, 'flash_sale_purchases_total{outcome="accepted"}')).toBe(1);
    expect(sample(metrics, 'flash_sale_reservation_script_seconds_count')).toBeGreaterThanOrEqual(1);
    expect(metrics).toContain('flash_sale_reservation_script_seconds_bucket{le="0.001"}');
    for (const state of QUEUE_STATES) {
      expect(sample(metrics, `flash_sale_queue_depth{queue="orders",state="${state}"}`)).toBeGreaterThanOrEqual(0);
    }
    expect(metrics).toContain('# TYPE flash_sale_stock_drift gauge');
    // The purchase marked its sale active: its hand-off backlog has a series (0 or 1: the worker races us).
    expect(sample(metrics, `flash_sale_handoff_backlog{sale="${sale.id}"}`)).toBeLessThanOrEqual(1);
    // The sale's stock was leased to Redis at creation; nothing is an order yet (the worker is racing us).
    const lease = (state: string) => sample(metrics, `flash_sale_lease_units{sale="${sale.id}",state="${state}"}`);
    expect(lease('granted')).toBe(5);
    expect(lease('in_doubt')).toBe(0);
    expect(lease('returned')).toBe(0);
    expect((lease('converted') ?? 0) + (lease('outstanding') ?? 0)).toBe(5);
    // prom-client's default process and Node.js metrics.
    expect(sample(metrics, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
    expect(metrics).toContain('nodejs_heap_size_used_bytes');

    // A replay of the same token and a refusal are counted under their own outcomes.
    expect((await purchase()).status).toBe(202);
    const refused = await client.call('POST', `/api/sales/${sale.id}/purchase`, {
      token: buyer.token,
      json: { token: 'no-such-submit-token' },
    });
    expect(refused.status).toBe(403);
    const after = (await client.raw('GET', '/metrics')).text;
    expect(sample(after, 'flash_sale_purchases_total{outcome="accepted"}')).toBe(1);
    expect(sample(after, 'flash_sale_purchases_total{outcome="replayed"}')).toBe(1);
    expect(sample(after, 'flash_sale_purchases_total{outcome="TOKEN_INVALID"}')).toBe(1);
    expect(sample(after, 'flash_sale_reservation_script_seconds_count')).toBe(3);
  });

  it('the worker serves its own /metrics with the order-creation latency, measured from reservedAt', async () => {
    const { client, admin } = w;
    const sale = await client.createSale(admin, { name: 'Timed', priceCents: 100, stock: 5 });
    const buyer = await client.guest();
    const purchase = await client.call<{ orderNo: string }>('POST', `/api/sales/${sale.id}/purchase`, {
      token: buyer.token,
      json: { token: await client.submitToken(sale.id, buyer.token) },
    });
    await client.orderWritten(purchase.body.orderNo, buyer.token, 20_000);

    const worker = new URL(`http://127.0.0.1:${w.testEnv.env['WORKER_METRICS_PORT']}`);
    const scrape = await fetch(new URL('/metrics', worker));
    expect(scrape.status).toBe(200);
    expect(scrape.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const metrics = await scrape.text();
    expect(sample(metrics, 'flash_sale_order_creation_seconds_count')).toBeGreaterThanOrEqual(1);
    const sum = sample(metrics, 'flash_sale_order_creation_seconds_sum')!;
    expect(sum).toBeGreaterThan(0);
    expect(sum).toBeLessThan(60);
    expect(metrics).toContain('process_cpu_user_seconds_total');
    expect((await fetch(new URL('/other', worker))).status).toBe(404);
  });

  it('counts an order paid once, however often its payment is notified (the funnel’s "paid")', async () => {
    const { client, admin } = w;
    const sale = await client.createSale(admin, { name: 'Paid once', priceCents: 100, stock: 5 });
    const buyer = await client.guest();
    const purchase = await client.buy(sale.id, buyer.token);
    expect(purchase.status).toBe(202);
    await client.orderWritten(purchase.body.orderNo, buyer.token, 20_000);
    const paidBefore = sample(await scrape(), 'flash_sale_orders_paid_total');
    expect(paidBefore).toBe(0);

    const paid = await client.call<{ status: string }>('POST', `/api/orders/${purchase.body.orderNo}/pay`, {
      token: buyer.token,
    });
    expect(paid.body.status).toBe('PAID');
    expect(sample(await scrape(), 'flash_sale_orders_paid_total')).toBe(1);
    // The simulated provider's own callbacks (PAYMENT_CALLBACK_COPIES, 2) arrive later: duplicates, not counted.
    const afterCallbacks = await waitFor(
      'both payment callbacks',
      scrape,
      (metrics) => sample(metrics, 'flash_sale_payment_callbacks_total{status="200",outcome="duplicate"}') === 2,
      20_000,
    );
    expect(sample(afterCallbacks, 'flash_sale_orders_paid_total')).toBe(1);
  });
});

describe('dependency and persistence gauges (a private redis-server with its AOF, reconfigured and killed)', () => {
  let redisServer: PrivateRedisServer;
  const w = useStackWorld({
    worker: false,
    env: async () => {
      redisServer = await PrivateRedisServer.start({ persistent: true });
      return { REDIS_URL: redisServer.url };
    },
  });
  const scrape = async () => (await w.client.raw('GET', '/metrics')).text;

  afterAll(() => redisServer?.destroy());

  it('says whether Redis keeps its AOF and whether Redis and MySQL answer, at every scrape', async () => {
    const aof = `flash_sale_redis_aof_enabled{node="127.0.0.1:${redisServer.port}"}`;
    const redisUp = 'flash_sale_dependency_up{dependency="redis"}';
    const mysqlUp = 'flash_sale_dependency_up{dependency="mysql"}';
    const first = await scrape();
    expect(sample(first, aof)).toBe(1);
    expect(sample(first, redisUp)).toBe(1);
    expect(sample(first, mysqlUp)).toBe(1);

    const admin = createRedisClient({ url: redisServer.url, clusterNodes: [] });
    try {
      await admin.config('SET', 'appendonly', 'no');
    } finally {
      admin.disconnect();
    }
    expect(sample(await scrape(), aof)).toBe(0);

    await redisServer.kill();
    const down = await waitFor('Redis reported down', scrape, (metrics) => sample(metrics, redisUp) === 0, 20_000);
    expect(sample(down, mysqlUp)).toBe(1);
    expect(down).not.toContain('flash_sale_redis_aof_enabled{'); // unknown while Redis is away, not "off"

    // Started again as configured (with its AOF): both back at the next scrapes.
    await redisServer.restart();
    const back = await waitFor('Redis reported up', scrape, (metrics) => sample(metrics, redisUp) === 1, 20_000);
    expect(sample(back, aof)).toBe(1);
  });
});

describe('stock drift and oversold gauges (API only: no reconciliation job writes the hash or repairs the books meanwhile)', () => {
  const w = useStackWorld({ worker: false, database: true, saleRedis: true });

  it('has no series while the reconciliation hash is empty, then one per sale with its drift', async () => {
    const before = (await w.client.raw('GET', '/metrics')).text;
    expect(before).not.toMatch(/^flash_sale_stock_drift\{/m);

    await w.redis.hset(w.keys.reconciliation, { '41': '0', '42': '-3', '43': 'not-a-number' });
    const after = (await w.client.raw('GET', '/metrics')).text;
    expect(sample(after, 'flash_sale_stock_drift{sale="41"}')).toBe(0);
    expect(sample(after, 'flash_sale_stock_drift{sale="42"}')).toBe(-3);
    expect(after).not.toContain('sale="43"');

    // A sale that leaves the hash leaves the scrape too (the gauge is rebuilt on every scrape).
    await w.redis.hdel(w.keys.reconciliation, '42');
    expect((await w.client.raw('GET', '/metrics')).text).not.toContain('sale="42"');
  });

  it('reads the oversold units of each recent sale of any strategy from MySQL, labelled with its strategy', async () => {
    const { client, admin } = w;
    // A MySQL strategy: the API writes the order row itself, no worker needed.
    const sale = await client.createSale(admin, { name: 'Held', priceCents: 100, stock: 2, strategy: 'db-optimistic' });
    const buyer = await client.guest();
    expect((await client.buy(sale.id, buyer.token)).status).toBe(201);
    const series = `flash_sale_oversold_units{sale="${sale.id}",strategy="db-optimistic"}`;
    const scrape = async () => (await w.client.raw('GET', '/metrics')).text;
    expect(sample(await scrape(), series)).toBe(0);

    // Books no strategy but the unsafe ones would write: one unit held, none in stock.
    await w.db.query('UPDATE sales SET stock = 0, available = 0 WHERE id = ?', [sale.id]);
    expect(sample(await scrape(), series)).toBe(1);

    // The peak beside it stays once the unit is given back: an oversell is never forgotten.
    const peak = `flash_sale_oversold_peak_units{sale="${sale.id}",strategy="db-optimistic"}`;
    expect(sample(await scrape(), peak)).toBe(1);
    await w.db.query("UPDATE orders SET status = 'CANCELLED' WHERE sale_id = ?", [sale.id]);
    const after = await scrape();
    expect(sample(after, series)).toBe(0);
    expect(sample(after, peak)).toBe(1);
  });
});
