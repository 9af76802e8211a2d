import type { BrowserContextOptions, Locator, Page, Request, Route } from 'playwright-core';
import {
  assertStorefrontBuilt,
  BrowserHarness,
  saveScreenshot,
  STEP_TIMEOUT_MS,
  STOREFRONT_DIR,
} from '../support/browser';
import { waitFor } from '../support/fixtures';
import { startStack, type RunningStack } from '../support/running-stack';
import { createTestEnv, type TestEnv } from '../support/test-env';

interface Sale {
  id: string;
  name: string;
  priceCents: number;
  stock: number;
  remaining: number;
  perUserLimit: number;
  startsAt: string;
  endsAt: string;
  strategy: string;
  status: string;
}
interface Order {
  orderNo: string;
  saleId: string;
  status: string;
}
interface GuestSession {
  token: string;
  user: { id: string; name: string };
}

const ADMIN_PASSWORD = 'test-admin-password';
const HOUR = 3_600_000;
const PHONE = { width: 390, height: 844 };
const PHONE_CONTEXT: BrowserContextOptions = { viewport: PHONE, isMobile: true, hasTouch: true };

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The end-to-end scenarios, in order, on one stack: the built storefront served by the real
 * API (with its worker, Redis and MariaDB) and driven in headless Chromium, one browser context per
 * shopper. Screenshots land in artifacts/screenshots/ (FAILED-*.png when a scenario fails).
 */
describe('storefront and admin console in Chromium (real API, worker, Redis, MariaDB)', () => {
  let testEnv: TestEnv;
  let stack: RunningStack;
  let harness: BrowserHarness;
  let adminToken: string;

  beforeAll(async () => {
    assertStorefrontBuilt();
    testEnv = await createTestEnv({ STOREFRONT_DIR });
    stack = await startStack(testEnv.config);
    const home = await stack.client.raw('GET', '/');
    if (home.status !== 200 || !home.text.includes('id="root"')) {
      throw new Error(`The API does not serve the storefront from ${STOREFRONT_DIR}: GET / → ${home.status}`);
    }
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

  async function createSale(input: { name: string; stock: number; perUserLimit: number; priceCents?: number }) {
    const response = await stack.client.call<Sale>('POST', '/api/admin/sales', {
      token: adminToken,
      json: {
        priceCents: 4999,
        startsAt: new Date().toISOString(),
        endsAt: new Date(Date.now() + HOUR).toISOString(),
        strategy: 'redis-lua',
        description: 'A flash sale created by the end-to-end test.',
        ...input,
      },
    });
    expect(response.status).toBe(201);
    return response.body;
  }

  async function ordersInSale(guestToken: string, saleId: string): Promise<Order[]> {
    const response = await stack.client.call<Order[]>('GET', '/api/orders', { token: guestToken });
    expect(response.status).toBe(200);
    return response.body.filter((order) => order.saleId === saleId);
  }

  async function audit(saleId: string) {
    const response = await stack.client.call<Record<string, unknown>>('GET', `/api/admin/sales/${saleId}/audit`, {
      token: adminToken,
    });
    expect(response.status).toBe(200);
    return response.body;
  }

  /** A new shopper (own browser context) who opens the sale, follows "Sign in to buy" and comes back signed in. */
  async function guestOnSalePage(saleId: string, name: string, options: BrowserContextOptions = {}) {
    const page = await harness.newPage(options);
    await page.goto(`/sales/${saleId}`);
    await page.getByRole('link', { name: 'Sign in', exact: true }).waitFor(); // the header's, while signed out
    await page.getByRole('link', { name: 'Sign in to buy' }).click();
    await page.waitForURL(/\/sign-in\?next=/);
    await page.getByRole('button', { name: 'Continue as a guest' }).click();
    await page.getByLabel('Your name').fill(name);
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.waitForURL(`**/sales/${saleId}`);
    // Signed in: the header names the guest and offers to sign out; the panel offers to buy.
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    await page.getByText(name, { exact: true }).first().waitFor();
    await page.getByRole('button', { name: 'Buy now' }).waitFor();
    return page;
  }

  /** An admin (own browser context) signed in at /admin with the password, on the console's sales list. */
  async function adminConsole(options: BrowserContextOptions = {}) {
    const admin = await harness.newPage(options);
    await admin.goto('/admin');
    await admin.getByRole('heading', { name: 'Admin sign-in' }).waitFor();
    await admin.getByLabel('Admin password').fill(ADMIN_PASSWORD);
    await admin.getByRole('button', { name: 'Sign in', exact: true }).click();
    await admin.getByRole('navigation', { name: 'Admin' }).waitFor();
    await admin.getByRole('heading', { level: 1, name: 'Sales', exact: true }).waitFor();
    return admin;
  }

  /** The signed-in guest's session as the storefront keeps it (localStorage 'flashbuy.guest'). */
  async function guestSession(page: Page): Promise<GuestSession> {
    // (Expressions as strings: the tests' TypeScript has no DOM types.)
    const session = await page.evaluate<string | null>(`localStorage.getItem('flashbuy.guest')`);
    if (!session) throw new Error('no guest session in localStorage "flashbuy.guest"');
    return JSON.parse(session) as GuestSession;
  }

  const yourOrder = (page: Page) => page.getByRole('region', { name: 'Your order' });
  const orderStatus = (page: Page, text: RegExp) => yourOrder(page).getByRole('status').filter({ hasText: text });
  const buyButton = (page: Page) => page.getByRole('button', { name: 'Buy now' });

  async function horizontalOverflow(page: Page) {
    return page.evaluate<{ scrollWidth: number; viewportWidth: number }>(
      `({ scrollWidth: document.documentElement.scrollWidth, viewportWidth: window.innerWidth })`,
    );
  }

  it('a guest buys the last unit and pays; the next guests find it sold out; the books balance', () =>
    harness.scenario('last-unit', async () => {
      const sale = await createSale({ name: 'Last unit: noise-cancelling headphones', stock: 1, perUserLimit: 1 });
      expect(sale.status).toBe('live');

      // Cy opens the sale while it is live, and their page stops hearing about it (its refreshes
      // hang): Cy will press Buy on a page that still says a unit is left.
      const cy = await guestOnSalePage(sale.id, 'Cy');
      expect(await buyButton(cy).isEnabled()).toBe(true);
      const saleRefresh = (url: URL) => url.pathname === `/api/sales/${sale.id}`;
      const heldRefreshes: Route[] = [];
      await cy.route(saleRefresh, (route) => void heldRefreshes.push(route));

      const ada = await guestOnSalePage(sale.id, 'Ada');
      await ada.getByRole('heading', { level: 1, name: sale.name }).waitFor();
      await buyButton(ada).click();
      // QUEUED ("Reserved — confirming") until the worker writes the row, then PENDING_PAYMENT.
      await orderStatus(ada, /^Awaiting payment/).waitFor();
      const pay = yourOrder(ada).getByRole('button', { name: /^Pay / });
      expect(await pay.textContent()).toBe('Pay $49.99');
      await pay.click();
      await orderStatus(ada, /^Paid/).waitFor();
      await saveScreenshot(ada, 'storefront-sale-paid');

      // The shop window now shows the sale as sold out.
      await ada.getByRole('link', { name: 'Sales', exact: true }).click();
      await ada.getByRole('heading', { level: 1, name: 'Flash sales' }).waitFor();
      const card = saleCard(ada, sale.name);
      await card.getByText('Sold out', { exact: true }).waitFor();
      await saveScreenshot(ada, 'storefront-home');

      const bea = await guestOnSalePage(sale.id, 'Bea');
      await bea.getByText('Sold out', { exact: true }).first().waitFor();
      expect(await buyButton(bea).isDisabled()).toBe(true);
      await saveScreenshot(bea, 'storefront-sale-sold-out');

      // Cy, on the stale page, is refused in words; once the page hears again it says sold out too.
      await buyButton(cy).click();
      await cy.getByRole('alert').filter({ hasText: 'Sold out — every unit has been claimed.' }).waitFor();
      await saveScreenshot(cy, 'storefront-sale-refused');
      await cy.unroute(saleRefresh);
      await Promise.all(heldRefreshes.map((route) => route.continue().catch(() => undefined)));
      await cy.reload();
      await cy.getByText('Sold out', { exact: true }).first().waitFor();
      expect(await buyButton(cy).isDisabled()).toBe(true);

      const adaSession = await guestSession(ada);
      const beaSession = await guestSession(bea);
      expect(adaSession.user.name).toBe('Ada');
      const adaOrders = await ordersInSale(adaSession.token, sale.id);
      expect(adaOrders).toEqual([expect.objectContaining({ status: 'PAID' })]);
      expect(await ordersInSale(beaSession.token, sale.id)).toEqual([]);
      expect(await ordersInSale((await guestSession(cy)).token, sale.id)).toEqual([]);
      expect(await audit(sale.id)).toMatchObject({
        stock: 1,
        remaining: 0,
        held: 1,
        oversold: 0,
        duplicateOrders: 0,
        lostReservations: 0,
        ok: true,
        ordersByStatus: { QUEUED: 0, PENDING_PAYMENT: 0, PAID: 1 },
      });

      // The admin's dashboard of the sale says the same.
      const admin = await adminConsole();
      await admin.getByRole('link', { name: sale.name }).first().click();
      await admin.waitForURL(`**/admin/sales/${sale.id}`);
      await admin.getByRole('heading', { level: 1, name: sale.name }).waitFor();
      await admin.getByText('Purchases per second').first().waitFor();
      await admin.getByText('Books balance — no oversell').first().waitFor();
      const paidRow = admin.getByRole('table', { name: 'Orders by status' }).getByRole('row', { name: /\bPAID\b/ });
      expect((await paidRow.getByRole('cell').textContent())?.trim()).toBe('1');
      await pause(2_000); // a few samples in the chart
      await saveScreenshot(admin, 'admin-dashboard-sold-out');
    }));

  /**
   * Clicks "Buy now" and reloads the page before it hears the purchase's answer, as an impatient
   * shopper does. `delivered: false` holds the request in the browser (the server never sees it);
   * `true` lets the server take it and loses only the answer. Returns the submit token of that
   * purchase (and the order the server made, if it saw it) and the token the reloaded page replayed.
   */
  async function clickThenReload(page: Page, saleId: string, delivered: boolean) {
    const isPurchase = (request: Request) =>
      request.method() === 'POST' && isPurchaseUrl(saleId)(new URL(request.url()));
    let settle!: { resolve: (attempt: { token: string; orderNo?: string }) => void; reject: (error: Error) => void };
    const firstAttempt = new Promise<{ token: string; orderNo?: string }>((resolve, reject) => {
      settle = { resolve, reject };
    });
    await page.route(
      isPurchaseUrl(saleId),
      async (route) => {
        try {
          const { token } = route.request().postDataJSON() as { token: string };
          if (!delivered) return settle.resolve({ token }); // never forwarded, never answered
          const response = await route.fetch();
          expect(response.status()).toBe(202);
          // The server made the order; the page never gets the answer.
          settle.resolve({ token, orderNo: ((await response.json()) as { orderNo: string }).orderNo });
        } catch (error) {
          settle.reject(error as Error);
        }
      },
      { times: 1 },
    );
    await buyButton(page).click();
    const first = await firstAttempt;
    const replay = page.waitForRequest(isPurchase);
    await page.reload();
    const replayed = (await replay).postDataJSON() as { token: string };
    return { first, replayedToken: replayed.token };
  }

  /** Waits for the guest's `count`-th order in the sale, then for the page to follow it and settle. */
  async function settlesOnNewOrder(page: Page, guestToken: string, saleId: string, before: Order[], count: number) {
    const known = new Set(before.map((order) => order.orderNo));
    const orders = await waitFor(
      `order #${count} of the guest`,
      () => ordersInSale(guestToken, saleId),
      (list) => list.length >= count,
      STEP_TIMEOUT_MS,
    );
    const fresh = orders.filter((order) => !known.has(order.orderNo));
    expect(fresh).toHaveLength(1);
    await yourOrder(page).getByText(fresh[0]!.orderNo, { exact: true }).waitFor();
    await orderStatus(page, /^Awaiting payment/).waitFor();
    await buyButton(page).waitFor(); // idle again: "Reserving…" / "Finishing your purchase…" while busy
    await pause(1_000); // room for a stray second purchase to land, if the page had sent one
    const settled = await ordersInSale(guestToken, saleId);
    expect(settled).toHaveLength(count);
    return { orders: settled, fresh: fresh[0]! };
  }

  it('a double click on "Buy now" makes one order; a reload mid-purchase finishes it without a duplicate', () =>
    harness.scenario('double-click', async () => {
      // Limit 5: every purchase below is accepted by the limit, so a duplicate would show as an extra order.
      const sale = await createSale({ name: 'Double click: mechanical keyboard', stock: 10, perUserLimit: 5 });
      const cleo = await guestOnSalePage(sale.id, 'Cleo');
      const { token } = await guestSession(cleo);

      await buyButton(cleo).dblclick();
      const one = await settlesOnNewOrder(cleo, token, sale.id, [], 1);

      // Reloaded while the purchase was still in the browser: the page kept the submit token before
      // sending, so the reloaded page sends that same purchase, and it is made once.
      const lost = await clickThenReload(cleo, sale.id, false);
      expect(lost.replayedToken).toBe(lost.first.token);
      const two = await settlesOnNewOrder(cleo, token, sale.id, one.orders, 2);

      // Reloaded after the server made the order but before the page heard: the replay of the same
      // token gets the same order back, not a second one.
      const answerLost = await clickThenReload(cleo, sale.id, true);
      expect(answerLost.replayedToken).toBe(answerLost.first.token);
      const three = await settlesOnNewOrder(cleo, token, sale.id, two.orders, 3);
      expect(three.fresh.orderNo).toBe(answerLost.first.orderNo);

      const books = await waitFor(
        'the orders written by the worker',
        () => audit(sale.id),
        (body) => (body['ordersByStatus'] as Record<string, number>)['PENDING_PAYMENT'] === 3,
        STEP_TIMEOUT_MS,
      );
      expect(books).toMatchObject({ held: 3, remaining: 7, oversold: 0, duplicateOrders: 0, ok: true });

      // "My orders" lists exactly those three.
      await cleo.getByRole('link', { name: 'My orders' }).click();
      await cleo.getByRole('heading', { level: 1, name: 'My orders' }).waitFor();
      const table = cleo.getByRole('table');
      for (const order of three.orders) await table.getByRole('link', { name: order.orderNo }).waitFor();
      expect(await table.getByRole('row').count()).toBe(1 + 3); // the header row and one per order
      expect(await table.getByText('Awaiting payment', { exact: true }).count()).toBe(3);
      await saveScreenshot(cleo, 'storefront-my-orders');
    }));

  it('an admin creates a sale in the console; it appears in the storefront with a ticking countdown', () =>
    harness.scenario('admin-create', async () => {
      // Not UTC on purpose: the form's datetime-local fields are browser-local time, and a page that
      // took them for UTC would open the sale hours off.
      const admin = await adminConsole({ timezoneId: 'Asia/Kolkata' });
      await admin.getByRole('navigation', { name: 'Admin' }).getByRole('link', { name: 'New sale' }).click();
      await admin.getByRole('heading', { level: 1, name: 'New sale' }).waitFor();

      // Starts in about ten minutes (whole minutes: the field has no seconds), in the browser's zone.
      const schedule = await admin.evaluate(() => {
        const local = (date: Date) => {
          const pad = (n: number) => String(n).padStart(2, '0');
          return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
        };
        const startsAt = new Date(Date.now() + 10 * 60_000);
        startsAt.setSeconds(0, 0);
        const endsAt = new Date(startsAt.getTime() + 60 * 60_000);
        return {
          startsAtLocal: local(startsAt),
          endsAtLocal: local(endsAt),
          startsAt: startsAt.toISOString(),
          endsAt: endsAt.toISOString(),
        };
      });
      const name = 'Admin-made: espresso grinder';
      await admin.getByLabel('Name', { exact: true }).fill(name);
      await admin.getByLabel('Description', { exact: true }).fill('Created through the admin console by the e2e test.');
      await admin.getByLabel('Price (USD)').fill('129.50');
      await admin.getByLabel('Stock', { exact: true }).fill('25');
      await admin.getByLabel('Per-user limit').fill('2');
      await admin.getByLabel('Starts at').fill(schedule.startsAtLocal);
      await admin.getByLabel('Ends at').fill(schedule.endsAtLocal);
      await admin.getByLabel('Strategy').selectOption('redis-lua');
      await admin.getByLabel('Payment timeout (seconds)').fill('600');
      await admin.getByRole('button', { name: 'Create sale' }).click();

      await admin.waitForURL(/\/admin\/sales\/(?!new$)[^/]+$/);
      const saleId = decodeURIComponent(new URL(admin.url()).pathname.split('/').pop()!);
      await admin.getByRole('heading', { level: 1, name }).waitFor();
      await admin.getByText('Purchases per second').first().waitFor();
      await admin.getByText('Orders by status').first().waitFor();
      await admin.getByText('Books balance — no oversell').first().waitFor();
      await pause(2_500); // a few samples in the chart
      await saveScreenshot(admin, 'admin-dashboard');

      const created = await stack.client.call<Sale>('GET', `/api/sales/${saleId}`);
      expect(created.status).toBe(200);
      expect(created.body).toMatchObject({
        name,
        priceCents: 12950,
        stock: 25,
        perUserLimit: 2,
        strategy: 'redis-lua',
        status: 'upcoming',
      });
      expect(new Date(created.body.startsAt).toISOString()).toBe(schedule.startsAt);
      expect(new Date(created.body.endsAt).toISOString()).toBe(schedule.endsAt);

      const shopper = await harness.newPage();
      await shopper.goto('/');
      const card = saleCard(shopper, name);
      await card.getByText('Coming soon', { exact: true }).waitFor();
      const countdown = card.getByText(/^Starts in \d+:\d\d$/);
      await countdown.waitFor();
      const before = countdownSeconds(await countdown.textContent());
      const secondsToStart = (Date.parse(schedule.startsAt) - Date.now()) / 1_000;
      expect(Math.abs(before - secondsToStart)).toBeLessThan(5);
      const after = await waitFor(
        'the countdown to tick',
        async () => countdownSeconds(await countdown.textContent()),
        (seconds) => seconds !== before,
        2_500,
      );
      expect(after).toBeLessThan(before);
      await saveScreenshot(shopper, 'storefront-countdown');
    }));

  it('fits a phone: the shop window and a sale page at 390 px without sideways scrolling', () =>
    harness.scenario('phone', async () => {
      const sale = await createSale({
        name: 'Phone check: an uncommonly long product name that has to wrap on a narrow screen',
        stock: 40,
        perUserLimit: 2,
        priceCents: 123456,
      });

      const phone = await harness.newPage(PHONE_CONTEXT);
      await phone.goto('/');
      await phone.getByRole('heading', { level: 1, name: 'Flash sales' }).waitFor();
      await saleCard(phone, sale.name).waitFor();
      await saveScreenshot(phone, 'phone-storefront-home');
      expect(await horizontalOverflow(phone)).toEqual({ scrollWidth: PHONE.width, viewportWidth: PHONE.width });

      const shopper = await guestOnSalePage(sale.id, 'Dmitri Alexandrovich', PHONE_CONTEXT);
      await shopper.getByRole('heading', { level: 1, name: sale.name }).waitFor();
      expect(await horizontalOverflow(shopper)).toEqual({ scrollWidth: PHONE.width, viewportWidth: PHONE.width });

      // With an order on the page (a long order number) and on the orders page.
      await buyButton(shopper).click();
      await orderStatus(shopper, /^Awaiting payment/).waitFor();
      await saveScreenshot(shopper, 'phone-sale');
      expect(await horizontalOverflow(shopper)).toEqual({ scrollWidth: PHONE.width, viewportWidth: PHONE.width });
      await shopper.getByRole('link', { name: 'My orders' }).click();
      await shopper.getByRole('heading', { level: 1, name: 'My orders' }).waitFor();
      await shopper.getByRole('table').getByText('Awaiting payment', { exact: true }).waitFor();
      await saveScreenshot(shopper, 'phone-orders');
      expect(await horizontalOverflow(shopper)).toEqual({ scrollWidth: PHONE.width, viewportWidth: PHONE.width });
    }));
});

/** A sale's card in the shop window: the list item whose link is the sale's name. */
function saleCard(page: Page, name: string): Locator {
  return page.getByRole('listitem').filter({ has: page.getByRole('link', { name, exact: true }) });
}

/** Matches the sale's purchase route (page.route). */
function isPurchaseUrl(saleId: string): (url: URL) => boolean {
  return (url) => url.pathname === `/api/sales/${saleId}/purchase`;
}

/** "Starts in 9:58" → 598; "Starts in 1:02:05" → 3725. */
function countdownSeconds(text: string | null): number {
  const match = /^Starts in ((?:\d+:)?\d+:\d\d)$/.exec(text?.trim() ?? '');
  if (!match) throw new Error(`not a countdown: ${JSON.stringify(text)}`);
  return match[1]!.split(':').reduce((total, part) => total * 60 + Number(part), 0);
}
