import type { Order, Sale, Session, WaitingRoomSettings } from '@flash-sale/contract';
import type { BrowserContextOptions, Page } from 'playwright-core';
import { saveScreenshot } from '../support/browser';
import { boxFit, pageWidth } from './fit-checks';
import {
  adminConsole,
  buyButton,
  DESKTOP_CONTEXT,
  guestOnSalePage,
  orderStatus,
  PHONE,
  PHONE_CONTEXT,
  useStorefrontWorld,
} from './storefront-world';

/** How long a buyer may take to be let in from a few places back, on a slow shared machine. */
const ADMISSION_TIMEOUT_MS = 30_000;

/** The two widths the room must fit: a laptop window and a phone. */
const WIDTHS: { label: string; context: BrowserContextOptions }[] = [
  { label: 'desktop', context: DESKTOP_CONTEXT },
  { label: 'phone', context: PHONE_CONTEXT },
];

/**
 * A sale with a waiting room in Chromium against the real stack: a buyer joins behind others, sees their
 * place, wait and progress, is let in and buys with their admission pass, at 1280 and at 390 px; the
 * console watches the room and changes its rate and cap live.
 */
describe('the waiting room in the storefront and the console (real API, worker, Redis, MariaDB)', () => {
  const w = useStorefrontWorld({ priceCents: 2500 });

  /** Buyers who joined the sale's room through the API and do nothing more: they are ahead in the line. */
  async function buyersAhead(saleId: string, count: number): Promise<void> {
    for (let i = 0; i < count; i++) {
      const { token } = await w.stack.client.guest(`Ahead ${i + 1}`);
      const joined = await w.stack.client.callRetryingAfter('POST', `/api/sales/${saleId}/queue`, { token });
      expect(joined.status).toBe(201);
    }
  }

  /** The room's box (and everything in it) within the window, nothing cut, and the page not wider than the window. */
  async function expectFits(page: Page, selector: string, what: string): Promise<void> {
    const fit = await boxFit(page, selector);
    expect({ what, outOfSight: fit.outOfSight, overflowing: fit.overflowing }).toEqual({
      what,
      outOfSight: [],
      overflowing: [],
    });
    const widths = await pageWidth(page);
    expect({ what, scrollWidth: widths.scrollWidth }).toEqual({ what, scrollWidth: widths.windowWidth });
  }

  it.each(WIDTHS)(
    'at $label width a buyer joins behind others, waits with place, wait and progress, is let in and buys with the pass',
    ({ label, context }) =>
      w.harness.scenario(`room-buyer-${label}`, async () => {
        const room: WaitingRoomSettings = { admitPerSecond: 1, passSeconds: 60 };
        const sale = await w.createSale({ name: `Waiting room drop (${label})`, stock: 10, waitingRoom: room });
        expect(sale.waitingRoom).toEqual(room);
        await buyersAhead(sale.id, 4);

        const inLine = (page: Page) => page.getByRole('heading', { name: 'You are in the line' });
        const ada = await guestOnSalePage(w, sale.id, 'Ada', context, inLine);
        const panel = ada.locator('.waiting-room');
        const place = Number(await panel.locator('.waiting-room__place').textContent());
        expect(place).toBeGreaterThanOrEqual(2);
        await panel.getByText('Estimated wait', { exact: true }).waitFor();
        await panel.getByText(/When it is your turn you will have 1 minute to buy\./).waitFor();
        const progress = ada.getByRole('progressbar', { name: 'Your way to the front of the line' });
        expect(Number(await progress.getAttribute('aria-valuenow'))).toBeGreaterThanOrEqual(0);
        expect(await buyButton(ada).count()).toBe(0);
        await expectFits(ada, '.waiting-room', `${label}: the room while waiting`);
        await saveScreenshot(ada, `storefront-waiting-room-${label}`);

        const tokenRequest = ada.waitForRequest(
          (request) =>
            request.method() === 'POST' && new URL(request.url()).pathname === `/api/sales/${sale.id}/tokens`,
          { timeout: ADMISSION_TIMEOUT_MS + 15_000 },
        );
        await ada.getByRole('heading', { name: 'It is your turn to buy' }).waitFor({ timeout: ADMISSION_TIMEOUT_MS });
        await ada.getByText(/^Your turn ends in \d+:\d\d$/).waitFor();
        await expectFits(ada, '.buy-panel', `${label}: the buy panel once admitted`);
        if (label === 'phone') {
          // On a phone the Buy button is on the first screen once the turn comes.
          const buyBox = await buyButton(ada).boundingBox();
          expect(buyBox && buyBox.y + buyBox.height).toBeLessThanOrEqual(PHONE.height);
        }
        await saveScreenshot(ada, `storefront-waiting-room-admitted-${label}`);

        await buyButton(ada).click();
        const sent = (await tokenRequest).postDataJSON() as { pass?: unknown };
        // The pass as the API signs it: `<expiry>.<signature>`.
        expect(sent.pass).toMatch(/^\d+\.\S+$/);
        await orderStatus(ada, /^Awaiting payment/).waitFor();

        const session = JSON.parse(
          (await ada.evaluate<string | null>(`localStorage.getItem('flashbuy.guest')`)) ?? 'null',
        ) as Session;
        const orders = await w.stack.client.call<Order[]>('GET', '/api/orders', { token: session.token });
        expect(orders.body.filter((order) => order.saleId === sale.id)).toEqual([
          expect.objectContaining({ status: 'PENDING_PAYMENT', quantity: 1 }),
        ]);
      }),
  );

  it('the console shows the room live and changes its rate and cap while buyers wait', () =>
    w.harness.scenario('room-console', async () => {
      const sale = await w.createSale({
        name: 'Waiting room: console',
        stock: 50,
        waitingRoom: { admitPerSecond: 1, maxShopping: 40, passSeconds: 60 },
      });
      await buyersAhead(sale.id, 3);

      const admin = await adminConsole(w);
      await admin.getByRole('link', { name: sale.name }).first().click();
      await admin.getByRole('heading', { level: 1, name: sale.name }).waitFor();
      const panel = admin.getByRole('region', { name: 'Waiting room' });
      const stat = (label: string) => panel.locator('.stat').filter({ has: admin.getByText(label, { exact: true }) });
      await stat('Waiting')
        .locator('.stat__value')
        .filter({ hasText: /^[1-9]/ })
        .waitFor();
      await stat('Shopping').getByText('of at most 40').waitFor();
      await stat('Admitting').getByText('measured; configured 1/s').waitFor();

      const form = admin.getByRole('form', { name: 'Change the room live' });
      await form.getByLabel('Admit per second').fill('8');
      await form.getByLabel('Max shopping').fill('20');
      await form.getByRole('button', { name: 'Apply' }).click();
      await admin.getByText('Applied: admitting 8 per second, at most 20 shopping.').waitFor();
      // The next samples show the new settings, and the server has them (the pass length kept).
      await stat('Admitting').getByText('measured; configured 8/s').waitFor();
      await stat('Shopping').getByText('of at most 20').waitFor();
      const stored = await w.stack.client.call<Sale>('GET', `/api/sales/${sale.id}`);
      expect(stored.body.waitingRoom).toEqual({ admitPerSecond: 8, maxShopping: 20, passSeconds: 60 });
      await expectFits(admin, '.waiting-room-panel', 'desktop: the room panel');
      await saveScreenshot(admin, 'admin-dashboard-waiting-room');

      const phoneAdmin = await adminConsole(w, PHONE_CONTEXT);
      await phoneAdmin.goto(`/admin/sales/${sale.id}`);
      await phoneAdmin.getByRole('region', { name: 'Waiting room' }).getByText('Waiting', { exact: true }).waitFor();
      await expectFits(phoneAdmin, '.waiting-room-panel', 'phone: the room panel');
      await saveScreenshot(phoneAdmin, 'admin-dashboard-waiting-room-phone');
    }));
});
