import { readFileSync } from 'node:fs';
import type { BrowserContextOptions, Page, Route } from 'playwright-core';
import path from 'node:path';
import {
  assertStorefrontBuilt,
  BrowserHarness,
  saveScreenshot,
  SCREENSHOT_DIR,
  STOREFRONT_DIR,
} from '../support/browser';
import { waitFor } from '../support/fixtures';
import { startStack, type RunningStack } from '../support/running-stack';
import { createTestEnv, type TestEnv } from '../support/test-env';

interface Sale {
  id: string;
  name: string;
  status: string;
}
interface Order {
  orderNo: string;
  saleId: string;
  status: string;
}

const ADMIN_PASSWORD = 'test-admin-password';
const HOUR = 3_600_000;
const PHONE = { width: 390, height: 844 };
const PHONE_CONTEXT: BrowserContextOptions = { viewport: PHONE, isMobile: true, hasTouch: true };
const DESKTOP_CONTEXT: BrowserContextOptions = { viewport: { width: 1280, height: 800 } };

/**
 * Issue 11 in Chromium against the real API, worker, Redis and MariaDB: accounts that outlive a
 * browser, what a winner and a refused buyer read, the phone's first screen, the admin's orders
 * (list, search, CSV, end early) and the one-click oversell demonstration. Screenshots of every page at
 * desktop and phone width land in artifacts/screenshots/.
 */
describe('accounts, admin orders and the oversell demo in Chromium (real API, worker, Redis, MariaDB)', () => {
  let testEnv: TestEnv;
  let stack: RunningStack;
  let harness: BrowserHarness;
  let adminToken: string;

  beforeAll(async () => {
    assertStorefrontBuilt();
    testEnv = await createTestEnv({ STOREFRONT_DIR });
    stack = await startStack(testEnv.config);
    harness = await BrowserHarness.launch(stack.client.baseUrl);
    adminToken = await stack.client.adminToken(ADMIN_PASSWORD);
  });

  afterEach(async () => {
    await harness?.closeContexts();
  });

  afterAll(async () => {
    await harness?.close();
    await stack?.close();
    await testEnv?.cleanup();
  });

  async function createSale(input: {
    name: string;
    stock: number;
    perUserLimit?: number;
    startsAt?: string;
    imageUrl?: string;
  }) {
    const response = await stack.client.call<Sale>('POST', '/api/admin/sales', {
      token: adminToken,
      json: {
        priceCents: 2500,
        perUserLimit: 1,
        endsAt: new Date(Date.now() + HOUR).toISOString(),
        description: 'Made by the issue-11 end-to-end test.',
        ...input,
      },
    });
    expect(response.status).toBe(201);
    return response.body;
  }

  const buyButton = (page: Page) => page.getByRole('button', { name: 'Buy now' });
  const yourOrder = (page: Page) => page.getByRole('region', { name: 'Your order' });
  const orderStatus = (page: Page, text: RegExp) => yourOrder(page).getByRole('status').filter({ hasText: text });

  async function signInPage(page: Page, mode: 'register' | 'sign-in', name: string, password: string) {
    await page.goto(`/sign-in?mode=${mode}`);
    await page.getByLabel('Your name').fill(name);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: mode === 'register' ? 'Create account' : 'Sign in', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Flash sales' }).waitFor();
    await page.getByRole('banner').getByText(name, { exact: true }).waitFor();
  }

  async function adminConsole(options: BrowserContextOptions = {}) {
    const admin = await harness.newPage(options);
    await admin.goto('/admin');
    await admin.getByLabel('Admin password').fill(ADMIN_PASSWORD);
    await admin.getByRole('button', { name: 'Sign in', exact: true }).click();
    await admin.getByRole('navigation', { name: 'Admin' }).waitFor();
    return admin;
  }

  it('register → buy → sign out → sign in on another browser: the order is there; a guest is warned before signing out', () =>
    harness.scenario('accounts', async () => {
      const sale = await createSale({ name: 'Account check: trail running shoes', stock: 5 });
      const laptop = await harness.newPage(DESKTOP_CONTEXT);
      await laptop.goto('/sign-in?mode=register');
      await saveScreenshot(laptop, 'storefront-register');
      await signInPage(laptop, 'register', 'Hedy Lamarr', 'frequency-hopping');
      // A registered shopper is not offered the console: the Admin link is for signed-in admins.
      expect(await laptop.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Admin' }).count()).toBe(
        0,
      );

      await laptop.goto(`/sales/${sale.id}`);
      await buyButton(laptop).click();
      await orderStatus(laptop, /^Awaiting payment/).waitFor();
      const orderNo = (await yourOrder(laptop).locator('dd.mono').first().textContent())!.trim();
      await yourOrder(laptop).getByRole('button', { name: /^Pay / }).click();
      await orderStatus(laptop, /^Paid/).waitFor();
      // At the per-user limit the button is off and says why; the payment left no red alert behind.
      expect(await buyButton(laptop).isDisabled()).toBe(true);
      await laptop.getByText('You have 1 of 1 — the most one customer may buy here.').waitFor();
      expect(await laptop.getByRole('alert').count()).toBe(0);

      // A registered account signs out at once (its orders wait on the server).
      await laptop.getByRole('button', { name: 'Sign out' }).click();
      await laptop.getByRole('banner').getByRole('link', { name: 'Sign in' }).waitFor();

      // Another browser: sign in with the same name and password; the paid order is there.
      const phone = await harness.newPage(PHONE_CONTEXT);
      await phone.goto('/sign-in');
      await saveScreenshot(phone, 'phone-sign-in');
      await signInPage(phone, 'sign-in', 'Hedy Lamarr', 'frequency-hopping');
      await phone.getByRole('link', { name: 'My orders' }).click();
      await phone.getByRole('link', { name: orderNo }).waitFor();
      await phone.getByText('Paid', { exact: true }).waitFor();
      await phone.getByRole('link', { name: sale.name }).waitFor(); // the row links to its sale
      await saveScreenshot(phone, 'phone-orders');
      await phone.getByRole('link', { name: orderNo }).click();
      // The order page names its sale (a link) and shows the payment reference.
      await yourOrder(phone).getByRole('link', { name: sale.name }).waitFor();
      await yourOrder(phone).getByText('Payment reference').waitFor();
      await saveScreenshot(phone, 'phone-order');

      // A guest is warned before signing out, and offered to keep the account by registering.
      const guest = await harness.newPage(DESKTOP_CONTEXT);
      await guest.goto(`/sign-in?mode=guest`);
      await guest.getByLabel('Your name').fill('Guest Gus');
      await guest.getByRole('button', { name: 'Continue' }).click();
      await guest.getByRole('banner').getByText('guest', { exact: true }).waitFor();
      await guest.goto(`/sales/${sale.id}`);
      await buyButton(guest).click();
      await orderStatus(guest, /^Awaiting payment/).waitFor();
      await guest.getByRole('button', { name: 'Sign out' }).click();
      const warning = guest.getByRole('alertdialog', { name: 'Sign out of a guest account?' });
      await warning.waitFor();
      await saveScreenshot(guest, 'storefront-guest-sign-out-warning');
      await warning.getByRole('link', { name: 'Create an account' }).click();
      await guest.getByRole('heading', { level: 1, name: 'Create an account' }).waitFor();
      await guest.getByLabel('Password').fill('keep-my-orders');
      await guest.getByRole('button', { name: 'Create account' }).click();
      await guest.getByRole('heading', { level: 1, name: 'Flash sales' }).waitFor();
      const login = await stack.client.call<{ token: string }>('POST', '/api/auth/login', {
        json: { name: 'Guest Gus', password: 'keep-my-orders' },
      });
      const kept = await stack.client.call<Order[]>('GET', '/api/orders', { token: login.body.token });
      expect(kept.body.map((order) => order.saleId)).toEqual([sale.id]); // the guest's order came along
    }));

  it('a winner never reads "sold out" above their order; a refused buyer reads it once, and it clears when a unit returns', () =>
    harness.scenario('winner', async () => {
      const sale = await createSale({ name: 'Winner check: vintage camera', stock: 1 });
      const winner = await harness.newPage(DESKTOP_CONTEXT);
      await signInPage(winner, 'register', 'Winnie', 'winner-takes-all');
      const loser = await harness.newPage(DESKTOP_CONTEXT);
      await signInPage(loser, 'register', 'Lou', 'better-luck-next');
      await winner.goto(`/sales/${sale.id}`);
      await loser.goto(`/sales/${sale.id}`);
      await buyButton(loser).waitFor();
      // Lou's page stops hearing about the sale (its refreshes hang) until Lou has clicked.
      const saleRefresh = (url: URL) => url.pathname === `/api/sales/${sale.id}`;
      const heldRefreshes: Route[] = [];
      await loser.route(saleRefresh, (route) => void heldRefreshes.push(route));
      await buyButton(winner).click();
      await orderStatus(winner, /^Awaiting payment/).waitFor();
      await winner.reload();
      await orderStatus(winner, /^Awaiting payment/).waitFor();
      await winner.getByText('You got one', { exact: true }).waitFor();
      expect(await winner.getByText(/sold out/i).count()).toBe(0);
      await saveScreenshot(winner, 'storefront-sale-winner');

      // Lou's page still says a unit is left when Lou clicks: refused, in words.
      await buyButton(loser).click();
      await loser.getByRole('alert').filter({ hasText: 'Sold out — every unit has been claimed.' }).waitFor();
      await loser.unroute(saleRefresh);
      await Promise.all(heldRefreshes.map((route) => route.continue().catch(() => undefined)));
      await waitFor(
        'the sold-out box on the refused buyer’s page',
        async () => loser.getByText('Every unit is claimed.', { exact: false }).count(),
        (count) => count === 1,
        15_000,
      );
      // The box says it; the alert does not say it a second time.
      expect(
        await loser
          .getByRole('alert')
          .filter({ hasText: /sold out/i })
          .count(),
      ).toBe(0);
      await saveScreenshot(loser, 'storefront-sale-sold-out');

      // The winner cancels: the unit returns, Lou's page offers to buy again with no stale alert.
      await yourOrder(winner).getByRole('button', { name: 'Cancel order' }).click();
      await orderStatus(winner, /^Cancelled/).waitFor();
      await waitFor('Buy to open again for Lou', () => buyButton(loser).isEnabled(), Boolean, 15_000);
      expect(await loser.getByRole('alert').count()).toBe(0);
    }));

  it('on a phone, Buy and then Pay are on the first screen, and a sale shows its picture', () =>
    harness.scenario('phone-first-screen', async () => {
      const picture =
        '<svg xmlns="http://www.w3.org/2000/svg" width="640" height="360"><rect width="640" height="360" fill="#0e7490"/><circle cx="320" cy="180" r="120" fill="#fde68a"/></svg>';
      const sale = await createSale({
        name: 'Phone check: a camping stove with a long name that wraps on a phone',
        stock: 10,
        imageUrl: 'https://example.com/stove.png',
      });
      // The API takes only http(s) pictures; the test serves this one itself (no network here).
      const phone = await harness.newPage(PHONE_CONTEXT);
      await phone.route('https://example.com/stove.png', (route) =>
        route.fulfill({ status: 200, contentType: 'image/svg+xml', body: picture }),
      );
      await signInPage(phone, 'register', 'Pia', 'phone-first-screen');
      await phone.goto(`/sales/${sale.id}`);
      const buy = buyButton(phone);
      await buy.waitFor();
      const onFirstScreen = async (locator: typeof buy) => {
        const box = await locator.boundingBox();
        return box !== null && box.y >= 0 && box.y + box.height <= PHONE.height;
      };
      expect(await onFirstScreen(buy)).toBe(true);
      await saveScreenshot(phone, 'phone-sale');
      await buy.click();
      const pay = yourOrder(phone).getByRole('button', { name: /^Pay / });
      await pay.waitFor();
      await phone.evaluate('window.scrollTo(0, 0)');
      expect(await onFirstScreen(pay)).toBe(true);
      // The first screen only (not the full page): what the shopper sees without scrolling.
      await phone.screenshot({ path: path.join(SCREENSHOT_DIR, 'phone-sale-first-screen.png') });
      expect(await phone.locator('img.sale-hero__image').getAttribute('src')).toBe('https://example.com/stove.png');
      expect((await stack.client.raw('GET', '/favicon.ico')).status).toBe(200);
    }));

  it('admin: a sale’s orders listed, searched, downloaded as CSV; the sale edited and ended early; the console in a new tab', () =>
    harness.scenario('admin-orders', async () => {
      const sale = await createSale({ name: 'Admin check: espresso cups', stock: 10, perUserLimit: 2 });
      const buyers = [];
      for (const name of ['Orla', 'Otto', 'Olga']) {
        const registered = await stack.client.call<{ token: string }>('POST', '/api/auth/register', {
          json: { name, password: 'orders-for-admin' },
        });
        const token = await stack.client.submitToken(sale.id, registered.body.token);
        const bought = await stack.client.call<Order>('POST', `/api/sales/${sale.id}/purchase`, {
          token: registered.body.token,
          json: { token },
        });
        expect(bought.status).toBe(202);
        buyers.push({ name, orderNo: bought.body.orderNo });
      }
      await waitFor(
        'the three orders written',
        () =>
          stack.client.call<{ items: unknown[] }>('GET', `/api/admin/sales/${sale.id}/orders`, { token: adminToken }),
        (answer) => answer.body.items.length === 3,
        15_000,
      );

      const admin = await adminConsole(DESKTOP_CONTEXT);
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

      await secondTab.getByLabel('Order number, user id or account name').fill('Otto');
      await secondTab.getByRole('button', { name: 'Search' }).click();
      await waitFor(
        'the search result',
        () => table.getByRole('row').count(),
        (rows) => rows === 2,
        10_000,
      );
      await table.getByText(buyers[1]!.orderNo).waitFor();
      await secondTab.getByLabel('Status').selectOption('PAID');
      await secondTab.getByRole('heading', { name: 'No orders match' }).waitFor();
      await secondTab.getByLabel('Status').selectOption('');
      await secondTab.getByLabel('Order number, user id or account name').fill('');
      await secondTab.getByRole('button', { name: 'Search' }).click();
      await waitFor(
        'every order again',
        () => table.getByRole('row').count(),
        (rows) => rows === 4,
        10_000,
      );

      const download = secondTab.waitForEvent('download');
      await secondTab.getByRole('button', { name: 'Download CSV' }).click();
      const file = await download;
      expect(file.suggestedFilename()).toBe(`sale-${sale.id}-orders.csv`);
      const csv = readFileSync((await file.path())!, 'utf8')
        .trim()
        .split('\r\n');
      expect(csv[0]).toMatch(/^orderNo,saleId,userId,userName,/);
      expect(csv.slice(1).map((line) => line.split(',')[0])).toEqual(buyers.map((buyer) => buyer.orderNo));
      expect(csv[2]).toContain(',Otto,');

      await secondTab.getByRole('link', { name: '← Dashboard' }).click();
      await secondTab.getByRole('link', { name: 'Edit', exact: true }).click();
      await secondTab.getByRole('heading', { level: 1, name: `Edit “${sale.name}”` }).waitFor();
      await saveScreenshot(secondTab, 'admin-edit-sale');
      await secondTab.getByRole('button', { name: 'End sale now' }).click();
      await secondTab.getByText('The sale has ended: purchases are refused from now on.').waitFor();
      const after = await stack.client.call<Sale>('GET', `/api/sales/${sale.id}`);
      expect(after.body.status).toBe('ended');
      const late = await stack.client.guest();
      const refused = await stack.client.call<{ error: { code: string } }>('POST', `/api/sales/${sale.id}/purchase`, {
        token: late.token,
        json: { token: 'whatever' },
      });
      expect([refused.status, refused.body.error.code]).toEqual([410, 'SALE_ENDED']);

      // An upcoming sale's dashboard counts down to its start.
      const upcoming = await createSale({
        name: 'Admin check: opens later',
        stock: 5,
        startsAt: new Date(Date.now() + 30 * 60_000).toISOString(),
      });
      await secondTab.goto(`/admin/sales/${upcoming.id}`);
      await secondTab.getByText(/^Opens in \d+:\d\d$/).waitFor();
      await saveScreenshot(secondTab, 'admin-dashboard-upcoming');
    }));

  it('the oversell demo from the admin page: naive-unsafe oversells, the other strategies never do, audits ok', () =>
    harness.scenario('demo', async () => {
      const admin = await adminConsole(DESKTOP_CONTEXT);
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
      for (const strategy of ['db-optimistic', 'db-pessimistic', 'redis-lua']) {
        expect({ strategy, oversold: await cell(strategy, 'Oversold') }).toEqual({ strategy, oversold: '0' });
        expect(await cell(strategy, 'Audit')).toMatch(/^ok/);
      }
      expect(await cell('redis-lua', 'Accepted')).toBe('20');
      // The run is kept: it is listed, and the page shows it again after a reload.
      await admin.reload();
      await admin.getByRole('heading', { name: 'Results: 200 buyers, 20 units per sale' }).waitFor();
      await admin.getByRole('heading', { name: 'Earlier runs' }).waitFor();
      expect(await admin.locator('.demo-runs li').count()).toBeGreaterThanOrEqual(1);

      const phone = await adminConsole(PHONE_CONTEXT);
      await phone.goto(admin.url());
      await phone.getByRole('heading', { name: 'Results: 200 buyers, 20 units per sale' }).waitFor();
      await phone.waitForTimeout(500);
      await saveScreenshot(phone, 'phone-admin-demo');
    }));

  it('every page at desktop and phone width, and the offline state (screenshots)', () =>
    harness.scenario('screenshots', async () => {
      const sale = await createSale({ name: 'Screenshot: wireless earbuds', stock: 30, perUserLimit: 2 });
      for (const [prefix, context] of [
        ['desktop', DESKTOP_CONTEXT],
        ['phone', PHONE_CONTEXT],
      ] as const) {
        const shopper = await harness.newPage(context);
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
        const offline = await harness.newPage(context);
        await offline.route('**/api/**', (route) => route.abort('internetdisconnected'));
        await offline.goto(`/sales/${sale.id}`);
        await offline.getByText('Cannot reach the shop').waitFor({ timeout: 30_000 });
        await saveScreenshot(offline, `${prefix}-sale-offline`);
        await offline.getByRole('button', { name: 'Try again now' }).click(); // still offline: still said so
        await offline.getByText('Cannot reach the shop').waitFor();
        // Back online: the page finds the sale by itself (it keeps asking), no reload needed.
        await offline.unroute('**/api/**');
        await offline.getByRole('heading', { level: 1, name: sale.name }).waitFor({ timeout: 20_000 });

        const admin = await adminConsole(context);
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
        await harness.closeContexts();
      }
      const signedOutAdmin = await harness.newPage(DESKTOP_CONTEXT);
      await signedOutAdmin.goto('/admin');
      await signedOutAdmin.getByRole('heading', { name: 'Admin sign-in' }).waitFor();
      await saveScreenshot(signedOutAdmin, 'desktop-admin-sign-in');
      await signedOutAdmin.goto('/no-such-page');
      await signedOutAdmin.waitForTimeout(300);
      await saveScreenshot(signedOutAdmin, 'desktop-not-found');
    }));
});
