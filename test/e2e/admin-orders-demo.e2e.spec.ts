import { readFileSync } from 'node:fs';
import { type Order, type Sale, SALE_STRATEGIES, UNSAFE_STRATEGIES } from '@flash-sale/contract';
import { saveScreenshot } from '../support/browser';
import { waitFor } from '../support/fixtures';
import {
  adminConsole,
  buyButton,
  DESKTOP_CONTEXT,
  orderStatus,
  PHONE_CONTEXT,
  signInPage,
  useStorefrontWorld,
} from './storefront-world';

/**
 * The admin's orders (list, search, CSV, end early), the one-click oversell demonstration, and
 * screenshots of every page at desktop and phone width (artifacts/screenshots/).
 */
describe('admin orders and the oversell demo in Chromium (real API, worker, Redis, MariaDB)', () => {
  const w = useStorefrontWorld({ priceCents: 2500 });

  it('admin: a sale’s orders listed, searched, downloaded as CSV; the sale edited and ended early; the console in a new tab', () =>
    w.harness.scenario('admin-orders', async () => {
      const sale = await w.createSale({ name: 'Admin check: espresso cups', stock: 10, perUserLimit: 2 });
      const buyers = [];
      for (const name of ['Orla', 'Otto', 'Olga']) {
        const registered = await w.stack.client.call<{ token: string }>('POST', '/api/auth/register', {
          json: { name, password: 'orders-for-admin' },
        });
        const token = await w.stack.client.submitToken(sale.id, registered.body.token);
        const bought = await w.stack.client.call<Order>('POST', `/api/sales/${sale.id}/purchase`, {
          token: registered.body.token,
          json: { token },
        });
        expect(bought.status).toBe(202);
        buyers.push({ name, orderNo: bought.body.orderNo });
      }
      await w.ordersWritten(sale.id, 3);

      const admin = await adminConsole(w, DESKTOP_CONTEXT);
      // The guest's "Sign in" is not shown in the console, only the admin's Sign out.
      expect(await admin.getByRole('banner').getByRole('link', { name: 'Sign in' }).count()).toBe(0);
      await saveScreenshot(admin, 'admin-sales');
      // A second tab of the same browser is signed in already.
      const secondTab = await admin.context().newPage();
      await secondTab.goto(`/admin/sales/${sale.id}`);
      await secondTab.getByRole('heading', { level: 1, name: sale.name }).waitFor();
      await secondTab.getByRole('link', { name: 'Orders', exact: true }).click();
      const table = secondTab.getByRole('table', { name: 'Orders of the sale' });
      for (const buyer of buyers) await table.getByText(buyer.orderNo).waitFor();
      await saveScreenshot(secondTab, 'admin-sale-orders');
      /** Searches for `text` and waits until the table shows `rows` rows, its header included. */
      const search = async (text: string, rows: number) => {
        await secondTab.getByLabel('Order number, user id or buyer name').fill(text);
        await secondTab.getByRole('button', { name: 'Search' }).click();
        await waitFor(
          `${rows} rows for "${text}"`,
          () => table.getByRole('row').count(),
          (count) => count === rows,
          10_000,
        );
      };

      await search('Otto', 2);
      await table.getByText(buyers[1]!.orderNo).waitFor();
      await secondTab.getByLabel('Status').selectOption('PAID');
      await secondTab.getByRole('heading', { name: 'No orders match' }).waitFor();
      await secondTab.getByLabel('Status').selectOption('');
      await search('', 4); // every order again

      const download = secondTab.waitForEvent('download');
      await secondTab.getByRole('button', { name: 'Download CSV' }).click();
      const file = await download;
      expect(file.suggestedFilename()).toBe(`sale-${sale.id}-orders.csv`);
      const csv = readFileSync((await file.path())!, 'utf8')
        .trim()
        .split('\r\n');
      expect(csv[0]).toMatch(/^orderNo,saleId,userId,userName,/);
      // Newest first, like the page.
      expect(csv.slice(1).map((line) => line.split(',')[0])).toEqual(buyers.map((buyer) => buyer.orderNo).reverse());
      expect(csv[2]).toContain(',Otto,');

      await secondTab.getByRole('link', { name: '← Dashboard' }).click();
      await secondTab.getByRole('link', { name: 'Edit', exact: true }).click();
      await secondTab.getByRole('heading', { level: 1, name: `Edit “${sale.name}”` }).waitFor();
      await saveScreenshot(secondTab, 'admin-edit-sale');
      await secondTab.getByRole('button', { name: 'End sale now' }).click();
      await secondTab.getByRole('alertdialog').getByRole('button', { name: 'Yes, end it now' }).click();
      await secondTab.getByText('The sale has ended: purchases are refused from now on.').waitFor();
      const after = await w.stack.client.call<Sale>('GET', `/api/sales/${sale.id}`);
      expect(after.body.status).toBe('ended');
      const late = await w.stack.client.guest();
      const refused = await w.stack.client.call<{ error: { code: string } }>('POST', `/api/sales/${sale.id}/purchase`, {
        token: late.token,
        json: { token: 'whatever' },
      });
      expect([refused.status, refused.body.error.code]).toEqual([410, 'SALE_ENDED']);

      // An upcoming sale's dashboard counts down to its start.
      const upcoming = await w.createSale({
        name: 'Admin check: opens later',
        stock: 5,
        startsAt: new Date(Date.now() + 30 * 60_000).toISOString(),
      });
      await secondTab.goto(`/admin/sales/${upcoming.id}`);
      await secondTab.getByText(/^Opens in \d+:\d\d$/).waitFor();
      await saveScreenshot(secondTab, 'admin-dashboard-upcoming');
    }));
  it('the oversell demo from the admin page: the unsafe strategies oversell, the others never do, audits ok', () =>
    w.harness.scenario('demo', async () => {
      const admin = await adminConsole(w, DESKTOP_CONTEXT);
      await admin.getByRole('navigation', { name: 'Admin' }).getByRole('link', { name: 'Oversell demo' }).click();
      await admin.getByRole('heading', { level: 1, name: 'Oversell demo' }).waitFor();
      await admin.getByLabel('Stock (units per sale)').fill('20');
      await admin.getByLabel('Buyers (one unit each, all at once)').fill('200');
      await admin.getByRole('button', { name: 'Run the demo' }).click();
      await admin.getByRole('heading', { name: /^Running: 200 buyers/ }).waitFor();
      await admin
        .getByRole('heading', { name: 'Results: 200 buyers, 20 units per sale' })
        .waitFor({ timeout: 120_000 });
      await admin.waitForTimeout(500); // the chart draws after the table
      await saveScreenshot(admin, 'admin-demo');

      const cell = async (strategy: string, label: string) =>
        (await admin.locator(`tr[data-strategy="${strategy}"] td[data-label="${label}"]`).textContent())?.trim() ?? '';
      expect(Number(await cell('naive-unsafe', 'Oversold'))).toBeGreaterThan(0);
      expect(await cell('naive-unsafe', 'Audit')).toMatch(/^not ok/);
      // The page pauses a lock holder by default: the unfenced lock's stale write oversells.
      expect(Number(await cell('redis-lock-unfenced', 'Oversold'))).toBeGreaterThan(0);
      for (const strategy of SALE_STRATEGIES.filter((name) => !UNSAFE_STRATEGIES.includes(name))) {
        expect({ strategy, oversold: await cell(strategy, 'Oversold') }).toEqual({ strategy, oversold: '0' });
        expect(await cell(strategy, 'Audit')).toMatch(/^ok/);
      }
      expect(await cell('redis-lua', 'Accepted')).toBe('20');
      // What an error is, beside the table: a "try again", never an oversell.
      expect(await admin.locator('.demo-legend').textContent()).toMatch(/503 with retry-after.*never an oversell/);
      // The run is kept: it is listed, and the page shows it again after a reload.
      await admin.reload();
      await admin.getByRole('heading', { name: 'Results: 200 buyers, 20 units per sale' }).waitFor();
      await admin.getByRole('heading', { name: 'Earlier runs' }).waitFor();
      // The list loads after its heading shows: wait for its first entry rather than count too early.
      await admin.locator('.demo-runs li').first().waitFor();
      expect(await admin.locator('.demo-runs li').count()).toBeGreaterThanOrEqual(1);

      const phone = await adminConsole(w, PHONE_CONTEXT);
      await phone.goto(admin.url());
      await phone.getByRole('heading', { name: 'Results: 200 buyers, 20 units per sale' }).waitFor();
      await phone.waitForTimeout(500);
      await saveScreenshot(phone, 'phone-admin-demo');
      // At phone width every strategy's name on the chart stands clear of the others.
      const strategies = await phone
        .locator('tr[data-strategy]')
        .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-strategy')));
      const ticks = phone.locator('.demo-chart .recharts-cartesian-axis-tick-value');
      await waitFor(
        'the chart drawn',
        () => ticks.count(),
        (count) => count > strategies.length,
        10_000,
      );
      const names = [];
      for (const tick of await ticks.all()) {
        if (strategies.includes((await tick.textContent())?.trim() ?? '')) names.push(tick);
      }
      expect(names).toHaveLength(strategies.length);
      const boxes = await Promise.all(names.map((name) => name.boundingBox()));
      for (const [i, a] of boxes.entries()) {
        for (const b of boxes.slice(i + 1)) {
          const apart =
            a!.x + a!.width <= b!.x || b!.x + b!.width <= a!.x || a!.y + a!.height <= b!.y || b!.y + b!.height <= a!.y;
          expect({ a, b, apart }).toEqual({ a, b, apart: true });
        }
      }
    }));
  it('every page at desktop and phone width, and the offline state (screenshots)', () =>
    w.harness.scenario('screenshots', async () => {
      const sale = await w.createSale({ name: 'Screenshot: wireless earbuds', stock: 30, perUserLimit: 2 });
      for (const [prefix, context] of [
        ['desktop', DESKTOP_CONTEXT],
        ['phone', PHONE_CONTEXT],
      ] as const) {
        const shopper = await w.harness.newPage(context);
        await shopper.goto('/');
        await shopper.getByRole('heading', { level: 1, name: 'Flash sales' }).waitFor();
        await saveScreenshot(shopper, `${prefix}-home`);
        await shopper.goto(`/sales/${sale.id}`);
        await shopper.getByRole('link', { name: 'Sign in to buy' }).waitFor();
        await saveScreenshot(shopper, `${prefix}-sale-signed-out`);
        await shopper.goto('/sign-in');
        await shopper.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
        await saveScreenshot(shopper, `${prefix}-sign-in`);
        await signInPage(shopper, 'register', `Shot ${prefix}`, 'screenshots-please');
        await shopper.goto(`/sales/${sale.id}`);
        await buyButton(shopper).click();
        await orderStatus(shopper, /^Awaiting payment/).waitFor();
        await saveScreenshot(shopper, `${prefix}-sale-bought`);
        await shopper.goto('/orders');
        await shopper.getByRole('heading', { level: 1, name: 'My orders' }).waitFor();
        await shopper.getByText('Awaiting payment', { exact: true }).first().waitFor();
        await saveScreenshot(shopper, `${prefix}-my-orders`);
        const link = shopper.getByRole('link', { name: /^S\d+-/ }).first();
        await link.click();
        await orderStatus(shopper, /^Awaiting payment/).waitFor();
        await saveScreenshot(shopper, `${prefix}-order`);

        // Offline: the sale page says so and offers to retry, instead of loading forever.
        const offline = await w.harness.newPage(context);
        await offline.route('**/api/**', (route) => route.abort('internetdisconnected'));
        await offline.goto(`/sales/${sale.id}`);
        await offline.getByText('Cannot reach the shop').waitFor({ timeout: 30_000 });
        await saveScreenshot(offline, `${prefix}-sale-offline`);
        await offline.getByRole('button', { name: 'Try again now' }).click(); // still offline: still said so
        await offline.getByText('Cannot reach the shop').waitFor();
        // Back online: the page finds the sale by itself (it keeps asking), no reload needed.
        await offline.unroute('**/api/**');
        await offline.getByRole('heading', { level: 1, name: sale.name }).waitFor({ timeout: 20_000 });

        const admin = await adminConsole(w, context);
        await saveScreenshot(admin, `${prefix}-admin-sales`);
        await admin.goto('/admin/sales/new');
        await admin.getByRole('heading', { level: 1, name: 'New sale' }).waitFor();
        await saveScreenshot(admin, `${prefix}-admin-new-sale`);
        await admin.goto(`/admin/sales/${sale.id}`);
        await admin.getByText('Purchases per second').first().waitFor();
        await admin.waitForTimeout(1_500);
        await saveScreenshot(admin, `${prefix}-admin-dashboard`);
        await admin.goto(`/admin/sales/${sale.id}/orders`);
        await admin.getByRole('table', { name: 'Orders of the sale' }).waitFor();
        await saveScreenshot(admin, `${prefix}-admin-orders`);
        await admin.goto(`/admin/sales/${sale.id}/edit`);
        await admin.getByRole('button', { name: 'Save changes' }).waitFor();
        await saveScreenshot(admin, `${prefix}-admin-edit`);
        await admin.goto('/admin/demo');
        await admin.getByRole('heading', { level: 1, name: 'Oversell demo' }).waitFor();
        await saveScreenshot(admin, `${prefix}-admin-demo-form`);
        await w.harness.closeContexts();
      }
      const signedOutAdmin = await w.harness.newPage(DESKTOP_CONTEXT);
      await signedOutAdmin.goto('/admin');
      await signedOutAdmin.getByRole('heading', { name: 'Admin sign-in' }).waitFor();
      await saveScreenshot(signedOutAdmin, 'desktop-admin-sign-in');
      await signedOutAdmin.goto('/no-such-page');
      await signedOutAdmin.waitForTimeout(300);
      await saveScreenshot(signedOutAdmin, 'desktop-not-found');
    }));
});
