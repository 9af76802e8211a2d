/**
 * The k6 scenarios, replayed from Node: each takes the scenario's default shape from
 * load-tests/lib/shapes.ts (`lib`), runs its buyers and prints both verdicts.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { arrivals, durationSeconds, runArrivals } from './arrivals.mjs';
import { prepare, purchase, tally } from './buyer.mjs';
import { admin, auditWhenQuiet, createSale, recorder } from './http.mjs';
import { p95Bounds, printRun, verdicts } from './verdicts.mjs';

/**
 * A spike of buyers (sign in, token, buy once) on one new sale, then its audit once the queue drained.
 * `buyer(load, t, sale, i)` replaces the plain buyer where a scenario does more.
 */
async function spikeOnOneSale({ shape, strategy, stock, name, buyer }) {
  const rec = recorder();
  const t = tally();
  const token = await admin(rec);
  const sale = await createSale(rec, token, { name: `${name} ${Date.now()}`, stock, strategy });
  const times = arrivals(shape);
  const load = recorder();
  const seconds = await runArrivals(times, async (i) => {
    if (buyer) return buyer(load, t, sale, i);
    const prepared = await prepare(load, t, sale.id, `${name.replace(/ /g, '-')}-${i}`);
    if (prepared) await purchase(load, t, prepared, sale.id, strategy);
  });
  const audit = await auditWhenQuiet(rec, token, sale.id);
  return { load, t, seconds, offered: `${times.length} buyers`, audit };
}

export const SHAPES = {
  async burst(lib) {
    const strategy = process.env.STRATEGY || 'redis-lua';
    const stock = lib.DEFAULT_STOCK.burst;
    const shape = lib.DEFAULT_SHAPES.burst;
    const run = await spikeOnOneSale({ shape, strategy, stock, name: 'node burst' });
    const verdict = verdicts(run.t, [[strategy, run.audit]], stock, p95Bounds(run.load));
    const title = `burst (${strategy}, stock ${stock}, spike ${JSON.stringify(shape)})`;
    printRun(title, run.load, run.t, run.seconds, run.offered, verdict);
  },

  async 'duplicate-clicks'(lib) {
    const stock = lib.DEFAULT_STOCK.duplicateClicks;
    const shape = lib.DEFAULT_SHAPES.duplicateClicks;
    let mismatches = 0;
    let overLimit = 0;
    const run = await spikeOnOneSale({
      shape,
      strategy: 'redis-lua',
      stock,
      name: 'node dup',
      buyer: async (load, t, sale, i) => {
        const buyer = await prepare(load, t, sale.id, `node-dup-${i}`);
        if (!buyer) return;
        const extra = [];
        for (let k = 0; k < 2; k++) {
          const more = await load.call('token', 'POST', `/api/sales/${sale.id}/tokens`, { token: buyer.session });
          if (more.status !== 201) return void t.otherBroken++;
          extra.push(more.body.token);
        }
        const sent = [...Array(5).fill(buyer.token), ...extra];
        const results = await Promise.all(sent.map((submit) => purchase(load, t, buyer, sale.id, 'redis-lua', submit)));
        const clicks = results
          .slice(0, 5)
          .map((r) => `${r.answer.status} ${r.answer.body?.orderNo ?? r.answer.body?.error?.code}`);
        if (new Set(clicks).size !== 1) mismatches++;
        // Replays of the winning token count once: the k6 scenario counts them in purchase_replayed.
        const orders = new Set(results.filter((r) => r.outcome === 'accepted').map((r) => r.answer.body.orderNo));
        t.accepted -= results.filter((r) => r.outcome === 'accepted').length - orders.size;
        if (orders.size > 1) overLimit++;
        for (const orderNo of orders)
          await load.call('get_order', 'GET', `/api/orders/${orderNo}`, { token: buyer.session });
      },
    });
    if (mismatches + overLimit > 0) run.t.notes.push(`replays disagreed ${mismatches}, over limit ${overLimit}`);
    run.t.unexpected += mismatches + overLimit;
    const verdict = verdicts(run.t, [['redis-lua', run.audit]], stock, p95Bounds(run.load));
    const title = `duplicate-clicks (stock ${stock}, spike ${JSON.stringify(shape)}, 5 clicks + 2 tokens)`;
    printRun(title, run.load, run.t, run.seconds, run.offered, verdict);
  },

  async comparison(lib) {
    const strategies = (process.env.STRATEGIES || 'redis-lua,db-optimistic,db-pessimistic,naive-unsafe').split(',');
    const stock = lib.DEFAULT_STOCK.comparison;
    const shape = lib.DEFAULT_SHAPES.comparison;
    for (const strategy of strategies) {
      const run = await spikeOnOneSale({ shape, strategy, stock, name: `node cmp ${strategy}` });
      const verdict = verdicts(
        run.t,
        [[strategy, run.audit]],
        strategy === 'naive-unsafe' ? undefined : stock,
        p95Bounds(run.load),
        { unsafeAllowed: ['naive-unsafe'] },
      );
      const title = `comparison: ${strategy} (stock ${stock}, spike ${JSON.stringify(shape)}; oversold ${run.audit.oversold})`;
      printRun(title, run.load, run.t, run.seconds, run.offered, verdict);
      await sleep(10_000); // the scenario's GAP between strategies
    }
  },

  /** soak: RATE buyers/s for DURATION_S (default: the scenario's 5 min) over SALES sales; some pay, some cancel. */
  async soak(lib) {
    const rec = recorder();
    const t = tally();
    const soak = lib.DEFAULT_SOAK;
    const seconds = Number(process.env.DURATION_S || durationSeconds(soak.duration));
    const token = await admin(rec);
    const sales = [];
    for (let i = 0; i < soak.sales; i++) {
      sales.push(
        await createSale(rec, token, {
          name: `node soak ${Date.now()} #${i}`,
          stock: 1_000_000,
          strategy: 'redis-lua',
        }),
      );
    }
    const times = Array.from({ length: soak.rate * seconds }, (_, i) => (i * 1000) / soak.rate);
    const load = recorder();
    let paid = 0;
    let cancelled = 0;
    const elapsed = await runArrivals(times, async (i) => {
      const sale = sales[i % sales.length];
      const buyer = await prepare(load, t, sale.id, `node-soak-${i}`);
      if (!buyer) return;
      const { outcome, answer } = await purchase(load, t, buyer, sale.id, 'redis-lua');
      const dice = Math.random();
      if (outcome !== 'accepted' || dice >= soak.payRatio + soak.cancelRatio) return;
      const orderNo = answer.body.orderNo;
      const deadline = Date.now() + 15_000; // ORDER_WAIT
      let order;
      do {
        order = await load.call('get_order', 'GET', `/api/orders/${orderNo}`, { token: buyer.session });
        if (order.body?.status === 'QUEUED') await sleep(200);
      } while (order.body?.status === 'QUEUED' && Date.now() < deadline);
      if (order.status !== 200 || order.body.status !== 'PENDING_PAYMENT') return void t.otherBroken++;
      const action = dice < soak.payRatio ? 'pay' : 'cancel';
      const done = await load.call(action, 'POST', `/api/orders/${orderNo}/${action}`, { token: buyer.session });
      const expected = action === 'pay' ? 'PAID' : 'CANCELLED';
      if (done.status !== 200 || done.body.status !== expected) return void t.otherBroken++;
      if (action === 'pay') paid++;
      else cancelled++;
    });
    const audits = [];
    for (const sale of sales) audits.push([`sale ${sale.id}`, await auditWhenQuiet(rec, token, sale.id)]);
    const verdict = verdicts(t, audits, undefined, p95Bounds(load));
    const title = `soak (${soak.rate}/s for ${seconds} s over ${soak.sales} sales; ${paid} paid, ${cancelled} cancelled)`;
    printRun(title, load, t, elapsed, `${times.length} buyers`, verdict);
  },

  async stampede(lib) {
    const rec = recorder();
    const t = tally();
    const strategy = process.env.STRATEGY || 'redis-lua';
    const users = Number(process.env.USERS || lib.DEFAULT_STAMPEDE.users);
    const stock = lib.DEFAULT_STOCK.stampede;
    const within = lib.DEFAULT_STAMPEDE.answeredWithinS;
    const token = await admin(rec);
    const sale = await createSale(rec, token, { name: `node stampede ${Date.now()}`, stock, strategy, startsInS: 10 });
    const opening = Date.parse(sale.startsAt);
    const load = recorder();
    const started = performance.now();
    // Every buyer signs in and takes a token before the opening (as the k6 VUs do), then waits for it.
    const buyers = await Promise.all(
      Array.from({ length: users }, (_, i) =>
        sleep(Math.random() * 5000).then(() => prepare(load, t, sale.id, `node-st-${i}`)),
      ),
    );
    await sleep(Math.max(0, opening - Date.now()));
    const answeredAfter = await Promise.all(
      buyers.map(async (buyer) => {
        if (!buyer) return 0;
        await purchase(load, t, buyer, sale.id, strategy);
        return Date.now() - opening;
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const audit = await auditWhenQuiet(rec, token, sale.id);
    const last = Math.max(...answeredAfter);
    const verdict = verdicts(t, [[strategy, audit]], stock, [
      { label: 'last buyer answered', value: last, below: within * 1000 },
    ]);
    if (t.accepted !== Math.min(stock, users))
      verdict.correctness = `FAIL — accepted ${t.accepted}, expected ${Math.min(stock, users)}; ${verdict.correctness}`;
    printRun(
      `stampede (${strategy}, ${users} buyers in one instant, stock ${stock}; ${(users / (last / 1000)).toFixed(0)} answers/s)`,
      load,
      t,
      seconds,
      `${users} buyers`,
      verdict,
    );
  },
};
