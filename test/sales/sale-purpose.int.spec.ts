import type { Sale } from '@flash-sale/contract';
import { useStackWorld } from '../support/stack-world';

/**
 * Test data stays out of the shop: a sale made by k6, the bench or the demo carries its purpose, the
 * storefront's list (`GET /api/sales`) shows only shop sales that have not ended, and the admin's list
 * (`GET /api/admin/sales`) shows every sale, filterable by purpose.
 */
describe('sale purpose: the storefront lists shop sales only, the admin every sale (real app, real MariaDB)', () => {
  const w = useStackWorld({ worker: false });

  const names = (sales: Sale[]) => sales.map((sale) => sale.name).sort();

  it('hides test data and ended sales from the storefront, lists them for the admin', async () => {
    const shop = await w.stack.client.createSale(w.admin, { name: 'Shop sneakers' });
    expect(shop.purpose).toBe('shop'); // the default
    const k6 = await w.stack.client.createSale(w.admin, { name: 'k6 burst', purpose: 'load-test' });
    expect(k6.purpose).toBe('load-test');
    await w.stack.client.createSale(w.admin, { name: 'bench sale', purpose: 'bench' });
    await w.stack.client.createSale(w.admin, { name: 'demo sale', purpose: 'demo', strategy: 'naive-unsafe' });
    const ended = await w.stack.client.createSale(w.admin, { name: 'Ended shop sale' });
    const ending = await w.stack.client.call('PATCH', `/api/admin/sales/${ended.id}`, {
      token: w.admin,
      json: { endsAt: new Date().toISOString() },
    });
    expect(ending.status).toBe(200);

    const storefront = await w.stack.client.call<Sale[]>('GET', '/api/sales');
    expect(storefront.status).toBe(200);
    expect(names(storefront.body)).toEqual(['Shop sneakers']);

    const all = await w.stack.client.call<Sale[]>('GET', '/api/admin/sales', { token: w.admin });
    expect(names(all.body)).toEqual(['Ended shop sale', 'Shop sneakers', 'bench sale', 'demo sale', 'k6 burst']);
    const loadTests = await w.stack.client.call<Sale[]>('GET', '/api/admin/sales?purpose=load-test', {
      token: w.admin,
    });
    expect(names(loadTests.body)).toEqual(['k6 burst']);

    // A hidden sale is still reachable by id: k6 and the demo buy from it.
    const direct = await w.stack.client.call<Sale>('GET', `/api/sales/${k6.id}`);
    expect(direct.status).toBe(200);
    expect(direct.body.purpose).toBe('load-test');
  });

  it('refuses an unknown purpose (400 VALIDATION_FAILED, nothing created) and keeps the admin list admin-only', async () => {
    const before = await w.stack.client.call<Sale[]>('GET', '/api/admin/sales', { token: w.admin });
    const bad = await w.stack.client.call<{ error: { code: string } }>('POST', '/api/admin/sales', {
      token: w.admin,
      json: {
        name: 'x',
        priceCents: 1,
        stock: 1,
        endsAt: new Date(Date.now() + 3_600_000).toISOString(),
        purpose: 'fake',
      },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('VALIDATION_FAILED');
    const badFilter = await w.stack.client.call<{ error: { code: string } }>('GET', '/api/admin/sales?purpose=fake', {
      token: w.admin,
    });
    expect(badFilter.status).toBe(400);
    expect(badFilter.body.error.code).toBe('VALIDATION_FAILED');
    const after = await w.stack.client.call<Sale[]>('GET', '/api/admin/sales', { token: w.admin });
    expect(after.body.length).toBe(before.body.length);

    expect((await w.stack.client.call('GET', '/api/admin/sales')).status).toBe(401);
    const guest = await w.stack.client.guest('shopper');
    expect((await w.stack.client.call('GET', '/api/admin/sales', { token: guest.token })).status).toBe(403);
  });
});
