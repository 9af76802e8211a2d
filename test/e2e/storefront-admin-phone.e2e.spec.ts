import type { Sale } from '@flash-sale/contract';
import type { Page } from 'playwright-core';
import { saveScreenshot } from '../support/browser';
import { waitFor } from '../support/fixtures';
import {
  adminConsole,
  buyButton,
  guestOnSalePage,
  orderStatus,
  pause,
  PHONE,
  PHONE_CONTEXT,
  saleCard,
  useStorefrontWorld,
} from './storefront-world';

/**
 * An admin creates a sale in the console and the storefront shows it with a ticking countdown; the shop
 * window and a sale page fit a phone.
 */
describe('the admin console and a phone in Chromium (real API, worker, Redis, MariaDB)', () => {
  const w = useStorefrontWorld({ priceCents: 4999 });

  async function horizontalOverflow(page: Page) {
    return page.evaluate<{ scrollWidth: number; viewportWidth: number }>(
      `({ scrollWidth: document.documentElement.scrollWidth, viewportWidth: window.innerWidth })`,
    );
  }

  it('an admin creates a sale in the console; it appears in the storefront with a ticking countdown', () =>
    w.harness.scenario('admin-create', async () => {
      // Not UTC on purpose: the form's datetime-local fields are browser-local time, and a page that
      // took them for UTC would open the sale hours off.
      const admin = await adminConsole(w, { timezoneId: 'Asia/Kolkata' });
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

      const created = await w.stack.client.call<Sale>('GET', `/api/sales/${saleId}`);
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

      const shopper = await w.harness.newPage();
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
    w.harness.scenario('phone', async () => {
      const sale = await w.createSale({
        name: 'Phone check: an uncommonly long product name that has to wrap on a narrow screen',
        stock: 40,
        perUserLimit: 2,
        priceCents: 123456,
      });

      const phone = await w.harness.newPage(PHONE_CONTEXT);
      await phone.goto('/');
      await phone.getByRole('heading', { level: 1, name: 'Flash sales' }).waitFor();
      await saleCard(phone, sale.name).waitFor();
      await saveScreenshot(phone, 'phone-storefront-home');
      expect(await horizontalOverflow(phone)).toEqual({ scrollWidth: PHONE.width, viewportWidth: PHONE.width });

      const shopper = await guestOnSalePage(w, sale.id, 'Dmitri Alexandrovich', PHONE_CONTEXT);
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

/** "Starts in 9:58" → 598; "Starts in 1:02:05" → 3725. */
function countdownSeconds(text: string | null): number {
  const match = /^Starts in ((?:\d+:)?\d+:\d\d)$/.exec(text?.trim() ?? '');
  if (!match) throw new Error(`not a countdown: ${JSON.stringify(text)}`);
  return match[1]!.split(':').reduce((total, part) => total * 60 + Number(part), 0);
}
