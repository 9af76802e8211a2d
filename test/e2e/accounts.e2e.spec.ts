import path from 'node:path';
import type { Order } from '@flash-sale/contract';
import type { Route } from 'playwright-core';
import { saveScreenshot, SCREENSHOT_DIR } from '../support/browser';
import { waitFor } from '../support/fixtures';
import {
  buyButton,
  DESKTOP_CONTEXT,
  orderStatus,
  PHONE,
  PHONE_CONTEXT,
  signInPage,
  useStorefrontWorld,
  yourOrder,
} from './storefront-world';

/**
 * Accounts that outlive a browser, what a winner and a refused buyer read, and the phone's first screen,
 * in Chromium against the real stack.
 */
describe('accounts and buyers in Chromium (real API, worker, Redis, MariaDB)', () => {
  const w = useStorefrontWorld({ priceCents: 2500 });

  it('register → buy → sign out → sign in on another browser: the order is there; a guest is warned before signing out', () =>
    w.harness.scenario('accounts', async () => {
      const sale = await w.createSale({ name: 'Account check: trail running shoes', stock: 5 });
      const laptop = await w.harness.newPage(DESKTOP_CONTEXT);
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
      // At the per-user limit there is no Buy button, only why; the payment left no red alert behind.
      await laptop.getByText('You have 1 of 1 — the most one customer may buy here.').waitFor();
      expect(await buyButton(laptop).count()).toBe(0);
      expect(await laptop.getByRole('alert').count()).toBe(0);

      // A registered account signs out at once (its orders wait on the server).
      await laptop.getByRole('button', { name: 'Sign out' }).click();
      await laptop.getByRole('banner').getByRole('link', { name: 'Sign in' }).waitFor();

      // Another browser: sign in with the same name and password; the paid order is there.
      const phone = await w.harness.newPage(PHONE_CONTEXT);
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
      const guest = await w.harness.newPage(DESKTOP_CONTEXT);
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
      // Back on the sale the guest was looking at, now as an account.
      await guest.getByRole('heading', { level: 1, name: sale.name }).waitFor();
      expect(new URL(guest.url()).pathname).toBe(`/sales/${sale.id}`);
      const login = await w.stack.client.call<{ token: string }>('POST', '/api/auth/login', {
        json: { name: 'Guest Gus', password: 'keep-my-orders' },
      });
      const kept = await w.stack.client.call<Order[]>('GET', '/api/orders', { token: login.body.token });
      expect(kept.body.map((order) => order.saleId)).toEqual([sale.id]); // the guest's order came along
    }));
  it('a winner never reads "sold out" above their order; a refused buyer reads it once, and it clears when a unit returns', () =>
    w.harness.scenario('winner', async () => {
      const sale = await w.createSale({ name: 'Winner check: vintage camera', stock: 1 });
      const winner = await w.harness.newPage(DESKTOP_CONTEXT);
      await signInPage(winner, 'register', 'Winnie', 'winner-takes-all');
      const loser = await w.harness.newPage(DESKTOP_CONTEXT);
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
    w.harness.scenario('phone-first-screen', async () => {
      const picture =
        '<svg xmlns="http://www.w3.org/2000/svg" width="640" height="360"><rect width="640" height="360" fill="#0e7490"/><circle cx="320" cy="180" r="120" fill="#fde68a"/></svg>';
      const sale = await w.createSale({
        name: 'Phone check: a camping stove with a long name that wraps on a phone',
        stock: 10,
        imageUrl: 'https://example.com/stove.png',
      });
      // The API takes only http(s) pictures; the test serves this one itself (no network here).
      const phone = await w.harness.newPage(PHONE_CONTEXT);
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
      expect((await w.stack.client.raw('GET', '/favicon.ico')).status).toBe(200);
    }));
});
