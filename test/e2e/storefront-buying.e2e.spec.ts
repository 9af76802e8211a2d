import type { Order, Session } from '@flash-sale/contract';
import type { Page, Request, Route } from 'playwright-core';
import { saveScreenshot, STEP_TIMEOUT_MS } from '../support/browser';
import { waitFor } from '../support/fixtures';
import {
  adminConsole,
  buyButton,
  guestOnSalePage,
  isPurchaseUrl,
  orderStatus,
  pause,
  saleCard,
  useStorefrontWorld,
  yourOrder,
} from './storefront-world';

/**
 * Buying in Chromium against the real stack: the last unit, its payment and the sold-out window for the
 * next guests; a double click and a reload mid-purchase that must not make a second order.
 */
describe('buying in the storefront (real API, worker, Redis, MariaDB)', () => {
  const w = useStorefrontWorld({ priceCents: 4999 });

  async function ordersInSale(guestToken: string, saleId: string): Promise<Order[]> {
    const response = await w.stack.client.call<Order[]>('GET', '/api/orders', { token: guestToken });
    expect(response.status).toBe(200);
    return response.body.filter((order) => order.saleId === saleId);
  }

  async function audit(saleId: string) {
    const response = await w.stack.client.call<Record<string, unknown>>('GET', `/api/admin/sales/${saleId}/audit`, {
      token: w.admin,
    });
    expect(response.status).toBe(200);
    return response.body;
  }

  /** The signed-in guest's session as the storefront keeps it (localStorage 'flashbuy.guest'). */
  async function guestSession(page: Page): Promise<Session> {
    // (Expressions as strings: the tests' TypeScript has no DOM types.)
    const session = await page.evaluate<string | null>(`localStorage.getItem('flashbuy.guest')`);
    if (!session) throw new Error('no guest session in localStorage "flashbuy.guest"');
    return JSON.parse(session) as Session;
  }

  it('a guest buys the last unit and pays; the next guests find it sold out; the books balance', () =>
    w.harness.scenario('last-unit', async () => {
      const sale = await w.createSale({ name: 'Last unit: noise-cancelling headphones', stock: 1, perUserLimit: 1 });
      expect(sale.status).toBe('live');

      // Cy opens the sale while it is live, and their page stops hearing about it (its refreshes
      // hang): Cy will press Buy on a page that still says a unit is left.
      const cy = await guestOnSalePage(w, sale.id, 'Cy');
      expect(await buyButton(cy).isEnabled()).toBe(true);
      const saleRefresh = (url: URL) => url.pathname === `/api/sales/${sale.id}`;
      const heldRefreshes: Route[] = [];
      await cy.route(saleRefresh, (route) => void heldRefreshes.push(route));

      const ada = await guestOnSalePage(w, sale.id, 'Ada');
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

      const bea = await guestOnSalePage(w, sale.id, 'Bea');
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
      const admin = await adminConsole(w);
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
    w.harness.scenario('double-click', async () => {
      // Limit 5: every purchase below is accepted by the limit, so a duplicate would show as an extra order.
      const sale = await w.createSale({ name: 'Double click: mechanical keyboard', stock: 10, perUserLimit: 5 });
      const cleo = await guestOnSalePage(w, sale.id, 'Cleo');
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
});
