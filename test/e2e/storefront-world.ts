import type { CreateSaleRequest, Sale } from '@flash-sale/contract';
import type { BrowserContextOptions, Locator, Page } from 'playwright-core';
import { waitFor } from '../support/fixtures';
import { assertStorefrontBuilt, BrowserHarness, STOREFRONT_DIR } from '../support/browser';
import { type StackWorld, useStackWorld } from '../support/stack-world';

export const ADMIN_PASSWORD = 'test-admin-password';
export const HOUR = 3_600_000;
export const PHONE = { width: 390, height: 844 };
export const PHONE_CONTEXT: BrowserContextOptions = { viewport: PHONE, isMobile: true, hasTouch: true };
export const DESKTOP_CONTEXT: BrowserContextOptions = { viewport: { width: 1280, height: 800 } };

/** One browser-test file's stack: the built storefront served by the real API, and headless Chromium. */
export interface StorefrontWorld extends StackWorld {
  harness: BrowserHarness;
  /** `POST /api/admin/sales` with the file's defaults under `fields`. */
  createSale(fields: Partial<CreateSaleRequest>): Promise<Sale>;
  ordersWritten(saleId: string, count: number): Promise<void>;
}

/**
 * Registers the hooks of a browser-test file: the stack (API, worker, Redis, MariaDB) serving the built
 * storefront, one Chromium, a fresh browser context per shopper closed after each test. `saleDefaults`
 * are the file's sale fields over the API's own defaults (times are computed per sale).
 */
export function useStorefrontWorld(saleDefaults: Partial<CreateSaleRequest>): StorefrontWorld {
  // Before the stack: without a build there is nothing to test, and the error says how to make one.
  beforeAll(assertStorefrontBuilt);
  const world = useStackWorld({ env: { STOREFRONT_DIR } }) as StorefrontWorld;
  beforeAll(async () => {
    const home = await world.stack.client.raw('GET', '/');
    if (home.status !== 200 || !home.text.includes('id="root"')) {
      throw new Error(`The API does not serve the storefront from ${STOREFRONT_DIR}: GET / → ${home.status}`);
    }
    world.harness = await BrowserHarness.launch(world.stack.client.baseUrl);
  });
  afterEach(async () => {
    await world.harness?.closeContexts();
  });
  afterAll(async () => {
    await world.harness?.close();
  });
  world.createSale = (fields) =>
    world.stack.client.createSale(world.admin, {
      description: 'Made by an end-to-end test.',
      endsAt: new Date(Date.now() + HOUR).toISOString(),
      ...saleDefaults,
      ...fields,
    });
  /** Waits until the admin API lists `count` written orders of the sale. */
  world.ordersWritten = async (saleId, count) => {
    await waitFor(
      `${count} orders written`,
      () =>
        world.stack.client.call<{ items: unknown[] }>('GET', `/api/admin/sales/${saleId}/orders`, {
          token: world.admin,
        }),
      (answer) => answer.body.items.length === count,
      15_000,
    );
  };
  return world;
}

export const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export const buyButton = (page: Page) => page.getByRole('button', { name: 'Buy now' });
export const yourOrder = (page: Page) => page.getByRole('region', { name: 'Your order' });
export const orderStatus = (page: Page, text: RegExp) => yourOrder(page).getByRole('status').filter({ hasText: text });

/** An admin (own browser context) signed in at /admin with the password, on the console's sales list. */
export async function adminConsole(world: StorefrontWorld, options: BrowserContextOptions = {}): Promise<Page> {
  const admin = await world.harness.newPage(options);
  await admin.goto('/admin');
  await admin.getByRole('heading', { name: 'Admin sign-in' }).waitFor();
  await admin.getByLabel('Admin password').fill(ADMIN_PASSWORD);
  await admin.getByRole('button', { name: 'Sign in', exact: true }).click();
  await admin.getByRole('navigation', { name: 'Admin' }).waitFor();
  await admin.getByRole('heading', { level: 1, name: 'Sales', exact: true }).waitFor();
  return admin;
}

/**
 * A new shopper (own browser context) who opens the sale, follows "Sign in to buy" and comes back signed
 * in; `ready` is what the signed-in page shows first (the Buy button, or a waiting room's headline).
 */
export async function guestOnSalePage(
  world: StorefrontWorld,
  saleId: string,
  name: string,
  options: BrowserContextOptions = {},
  ready: (page: Page) => Locator = buyButton,
): Promise<Page> {
  const page = await world.harness.newPage(options);
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
  await ready(page).waitFor();
  return page;
}

/** Registers or signs in on /sign-in, and waits for the shop window with the name in the header. */
export async function signInPage(page: Page, mode: 'register' | 'sign-in', name: string, password: string) {
  await page.goto(`/sign-in?mode=${mode}`);
  await page.getByLabel('Your name').fill(name);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: mode === 'register' ? 'Create account' : 'Sign in', exact: true }).click();
  await page.getByRole('heading', { level: 1, name: 'Flash sales' }).waitFor();
  await page.getByRole('banner').getByText(name, { exact: true }).waitFor();
}

/** A sale's card in the shop window: the list item whose link is the sale's name. */
export function saleCard(page: Page, name: string): Locator {
  return page.getByRole('listitem').filter({ has: page.getByRole('link', { name, exact: true }) });
}

/** Matches the sale's purchase route (page.route). */
export function isPurchaseUrl(saleId: string): (url: URL) => boolean {
  return (url) => url.pathname === `/api/sales/${saleId}/purchase`;
}
