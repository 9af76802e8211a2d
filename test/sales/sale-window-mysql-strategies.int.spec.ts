import { SALE_STRATEGIES, type SaleStrategy } from '@flash-sale/contract';
import type { PurchaseAnswer } from '../support/api-client';
import { startStack, type RunningStack } from '../support/running-stack';
import { useStackWorld } from '../support/stack-world';

/** The strategies that sell straight from MySQL in a transaction (naive-unsafe has none to roll back). */
const TRANSACTIONAL_MYSQL_STRATEGIES = SALE_STRATEGIES.filter(
  (strategy): strategy is Exclude<SaleStrategy, 'redis-lua' | 'naive-unsafe'> =>
    strategy !== 'redis-lua' && strategy !== 'naive-unsafe',
);

/**
 * No purchase is accepted after the end MySQL records, on the strategies that sell from MySQL too: an
 * API instance judges the window by its cached copy of the sale (a few seconds old at most), so an admin
 * who ends the sale on one instance would otherwise leave another selling until its copy expires. The
 * purchase's transaction reads the window MySQL records, by MySQL's clock, on the row it holds.
 */
describe('a sale ended on one API instance, bought on another (MySQL strategies, real MariaDB)', () => {
  const w = useStackWorld();
  let other: RunningStack;

  beforeAll(async () => {
    other = await startStack(w.testEnv.config, { worker: false });
  });
  afterAll(() => other?.close());

  it.each(TRANSACTIONAL_MYSQL_STRATEGIES)('%s: 410 SALE_ENDED right after the end, not a 201', async (strategy) => {
    const saleId = (await w.client.createSale(w.admin, { name: `Ended early (${strategy})`, stock: 10, strategy })).id;
    const [early, late] = [await other.client.guest(), await other.client.guest()];
    // The other instance has the sale in its cache: a purchase there reads it.
    expect((await other.client.buy(saleId, early.token)).status).toBe(201);
    const lateToken = await other.client.submitToken(saleId, late.token);

    const ended = await w.client.call<{ status: string }>('PATCH', `/api/admin/sales/${saleId}`, {
      token: w.admin,
      json: { endsAt: new Date().toISOString() },
    });
    expect(ended.status).toBe(200);

    const afterEnd = await other.client.call<PurchaseAnswer>('POST', `/api/sales/${saleId}/purchase`, {
      token: late.token,
      json: { token: lateToken },
    });
    expect(`${afterEnd.status} ${afterEnd.body.error?.code}`).toBe('410 SALE_ENDED');
    const audit = await w.client.call<{ held: number }>('GET', `/api/admin/sales/${saleId}/audit`, { token: w.admin });
    expect(audit.body.held).toBe(1);
  });
});
