import type { Sale } from '@flash-sale/contract';
import type { Page } from 'playwright-core';
import { saveScreenshot } from '../support/browser';
import {
  adminConsole,
  buyButton,
  DESKTOP_CONTEXT,
  guestOnSalePage,
  orderStatus,
  PHONE_CONTEXT,
  useStorefrontWorld,
} from './storefront-world';

/**
 * The console's and the shop's traps, each as a shopper or an admin meets it: "End sale now" asks
 * first and stays ended through a later Save; the orders page speaks in labels and keeps a buyer's
 * name whole on a phone; a failed order is not painted like a paid one; the console loads without a
 * router warning; the phone header stays two rows; registering from the sign-out prompt comes back.
 */
describe('the admin console and the shop without traps, in Chromium (real API, worker, Redis, MariaDB)', () => {
  const w = useStorefrontWorld({ priceCents: 1500, perUserLimit: 1 });

  const saleNow = async (id: string) => (await w.stack.client.call<Sale>('GET', `/api/sales/${id}`)).body;

  it('"End sale now" asks first; once ended, saving another field keeps the sale ended', () =>
    w.harness.scenario('end-now-then-save', async () => {
      const sale = await w.createSale({ name: 'Ending check: desk lamp', stock: 5 });
      const admin = await adminConsole(w, DESKTOP_CONTEXT);
      await admin.goto(`/admin/sales/${sale.id}/edit`);
      await admin.getByRole('heading', { level: 1, name: `Edit “${sale.name}”` }).waitFor();

      // The first press only asks; "Keep selling" leaves the sale live.
      await admin.getByRole('button', { name: 'End sale now' }).click();
      const confirm = admin.getByRole('alertdialog');
      await confirm.getByText(/Every purchase is refused from this moment/).waitFor();
      await confirm.getByRole('button', { name: 'Keep selling' }).click();
      await confirm.waitFor({ state: 'detached' });
      expect((await saleNow(sale.id)).status).toBe('live');

      await admin.getByRole('button', { name: 'End sale now' }).click();
      await admin.getByRole('alertdialog').getByRole('button', { name: 'Yes, end it now' }).click();
      await admin.getByText('The sale has ended: purchases are refused from now on.').waitFor();
      expect((await saleNow(sale.id)).status).toBe('ended');

      // The form's end time followed the sale: it no longer shows the old end an hour ahead.
      const endsAtField = admin.getByLabel('Ends at');
      const shownEnd = Date.parse(await endsAtField.inputValue());
      expect(Math.abs(shownEnd - Date.now())).toBeLessThan(2 * 60_000);

      // Saving a rename must not send an end time back and re-open the sale.
      await admin.getByLabel('Name', { exact: true }).fill('Ending check: desk lamp (renamed)');
      await admin.getByRole('button', { name: 'Save changes' }).click();
      await admin.getByRole('heading', { level: 1, name: 'Ending check: desk lamp (renamed)' }).waitFor();
      const after = await saleNow(sale.id);
      expect({ name: after.name, status: after.status }).toEqual({
        name: 'Ending check: desk lamp (renamed)',
        status: 'ended',
      });
      const late = await w.stack.client.guest();
      const refused = await w.stack.client.call<{ error: { code: string } }>('POST', `/api/sales/${sale.id}/tokens`, {
        token: late.token,
      });
      expect([refused.status, refused.body.error.code]).toEqual([410, 'SALE_ENDED']);
    }));

  it('the orders page: labels in the status filter, a guest named, searchable and kept whole on a phone card; FAILED is not green', () =>
    w.harness.scenario('orders-page', async () => {
      const sale = await w.createSale({ name: 'Orders check: tea tin', stock: 5 });
      const buyer = await w.stack.client.guest('Wilhelmina');
      expect((await w.stack.client.buy(sale.id, buyer.token)).status).toBe(202);
      await w.ordersWritten(sale.id, 1);

      const phone = await adminConsole(w, PHONE_CONTEXT);
      await phone.goto(`/admin/sales/${sale.id}/orders`);
      const table = phone.getByRole('table', { name: 'Orders of the sale' });
      await table.getByText('Awaiting payment').waitFor();
      const options = await phone.getByLabel('Status').locator('option').allTextContents();
      expect(options).toEqual([
        'Any status',
        'Reserved — confirming',
        'Awaiting payment',
        'Paid',
        'Cancelled',
        'Expired',
        'Failed',
      ]);
      // A guest's order shows the name the guest gave and says it is a guest, each on one line, not
      // squeezed into "gues/t" by the user id beside it.
      await phone.getByLabel('Order number, user id or buyer name').fill('wilhelmina');
      await phone.getByRole('button', { name: 'Search' }).click();
      await phone.waitForURL(/q=wilhelmina/);
      expect((await table.locator('.order-buyer__name').textContent())?.trim()).toBe('Wilhelmina');
      const guestLabel = table.locator('.order-buyer__guest');
      expect((await guestLabel.textContent())?.trim()).toBe('guest');
      const lines = await guestLabel.evaluate((element) => ({
        rects: element.getClientRects().length,
        height: element.getBoundingClientRect().height,
        // The page's window, typed here without the DOM library the tests compile without.
        lineHeight: parseFloat((globalThis as unknown as InPage).getComputedStyle(element).lineHeight),
      }));
      expect(lines.rects).toBe(1);
      expect(lines.height).toBeLessThan(lines.lineHeight * 1.5);
      await saveScreenshot(phone, 'phone-admin-orders-guest');

      // The shipped stylesheet paints a failed order in the danger colour, not the paid one's green.
      // (A page function as a string: the tests compile without the DOM's types.)
      const colours = await phone.evaluate<{ paid: string; failed: string }>(`(() => {
        const colourOf = (status) => {
          const badge = document.createElement('span');
          badge.className = 'badge badge--order-' + status;
          document.body.append(badge);
          const { color, backgroundColor } = getComputedStyle(badge);
          badge.remove();
          return color + ' on ' + backgroundColor;
        };
        return { paid: colourOf('paid'), failed: colourOf('failed') };
      })()`);
      expect(colours.failed).not.toBe(colours.paid);
      expect(colours.failed).toMatch(/^rgb\(185, 28, 28\)/); // --color-danger
    }));

  it('an admin page opened directly loads without a router warning', () =>
    w.harness.scenario('admin-direct-load', async () => {
      const sale = await w.createSale({ name: 'Direct load check', stock: 3 });
      const admin = await adminConsole(w, DESKTOP_CONTEXT);
      const warnings: string[] = [];
      admin.on('console', (message) => {
        if (message.type() === 'warning' || message.type() === 'error') warnings.push(message.text());
      });
      for (const path of [`/admin/sales/${sale.id}`, `/admin/sales/${sale.id}/orders`, '/admin/demo', '/admin']) {
        await admin.goto(path);
        await admin.getByRole('navigation', { name: 'Admin' }).waitFor();
        await admin.getByRole('heading', { level: 1 }).first().waitFor();
      }
      expect(warnings.filter((text) => /HydrateFallback/.test(text))).toEqual([]);
    }));

  it('a phone shopper: a two-row header, no Buy button past the limit, and back to the sale after registering', () =>
    w.harness.scenario('phone-shopper', async () => {
      const sale = await w.createSale({ name: 'Phone check: water bottle', stock: 5, perUserLimit: 1 });
      const page = await guestOnSalePage(w, sale.id, 'Bartholomew', PHONE_CONTEXT);

      // The header: the mark and who is signed in on one row, the navigation on the next.
      const header = await page.getByRole('banner').boundingBox();
      expect(header!.height).toBeLessThanOrEqual(112);
      await saveScreenshot(page, 'phone-header-guest');

      await buyButton(page).click();
      await orderStatus(page, /^Awaiting payment/).waitFor();
      await page.getByText('You have 1 of 1 — the most one customer may buy here.').waitFor();
      expect(await page.getByRole('button', { name: /buy now/i }).count()).toBe(0);

      // Sign out → "Create an account" → register: back on this sale, the order kept.
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('alertdialog').getByRole('link', { name: 'Create an account' }).click();
      await page.waitForURL(/\/sign-in\?/);
      await page.getByLabel('Your name').fill('Bartholomew Registered');
      await page.getByLabel('Password').fill('a-long-enough-password');
      await page.getByRole('button', { name: 'Create account', exact: true }).click();
      await page.waitForURL(`**/sales/${sale.id}`);
      await orderStatus(page, /^Awaiting payment/).waitFor();
      await expectOnSalePage(page, sale.name);
    }));
});

interface InPage {
  getComputedStyle(element: unknown): { lineHeight: string };
}

async function expectOnSalePage(page: Page, name: string) {
  await page.getByRole('heading', { level: 1, name }).waitFor();
  expect(new URL(page.url()).pathname).toMatch(/^\/sales\//);
}
