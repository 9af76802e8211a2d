import {
  SALE_STRATEGIES,
  type DemoRunReport,
  type Sale,
  type SalePurpose,
  type SaleStrategy,
} from '@flash-sale/contract';
import type { BrowserContextOptions, Page } from 'playwright-core';
import { saveElementScreenshot, saveScreenshot } from '../support/browser';
import { waitFor } from '../support/fixtures';
import { barChart, chartLabels, drawnLines, measureTable, pageWidth, type TableFit } from './fit-checks';
import { adminConsole, DESKTOP_CONTEXT, HOUR, PHONE_CONTEXT, useStorefrontWorld } from './storefront-world';

/** The two widths the console must fit: a laptop window and a phone. */
const WIDTHS = [
  { prefix: 'desktop', context: DESKTOP_CONTEXT, cards: false },
  { prefix: 'phone', context: PHONE_CONTEXT, cards: true },
] as const;

type When = 'next year' | 'upcoming' | 'live' | 'ended';

type SeededSale = { name: string; strategy: SaleStrategy; purpose: SalePurpose; when: When; stock: number };

/**
 * Sales of every purpose, upcoming, live and ended; names up to as long as the form lets them be (120
 * characters), one of them a single long word that has to break somewhere.
 */
const NAMED_SALES: SeededSale[] = [
  {
    name: 'Anniversary restock: waterproof trail-running sneakers in every size from 36 to 47, two pairs per customer',
    strategy: 'redis-lua',
    purpose: 'shop',
    when: 'live',
    stock: 250_000,
  },
  {
    name: 'Limited-edition hand-thrown ceramic pour-over coffee set with two matching cups and a walnut serving tray',
    strategy: 'db-optimistic',
    purpose: 'shop',
    when: 'next year',
    stock: 40,
  },
  {
    name: 'Supercalifragilisticexpialidocious-mechanical-keyboard-with-hot-swappable-switches',
    strategy: 'db-segmented',
    purpose: 'load-test',
    when: 'ended',
    stock: 40,
  },
  {
    name: 'Pessimistic row lock: a small batch of signed first-edition hardcover cookbooks',
    strategy: 'db-pessimistic',
    purpose: 'bench',
    when: 'live',
    stock: 40,
  },
  {
    name: 'Noise-cancelling over-ear headphones (matte black), refurbished by the maker with a two-year warranty',
    strategy: 'redis-lock',
    purpose: 'shop',
    when: 'upcoming',
    stock: 40,
  },
  {
    name: 'Lock without a fencing token, the lock holder paused past its lifetime',
    strategy: 'redis-lock-unfenced',
    purpose: 'demo',
    when: 'live',
    stock: 40,
  },
  {
    name: 'Oversell check: the unguarded read-check-write strategy under a burst of buyers',
    strategy: 'naive-unsafe',
    purpose: 'demo',
    when: 'upcoming',
    stock: 40,
  },
];

/** The named sales, and one for each other strategy of the contract's list: a sale of every strategy. */
const SALES: SeededSale[] = [
  ...NAMED_SALES,
  ...SALE_STRATEGIES.filter((strategy) => !NAMED_SALES.some((sale) => sale.strategy === strategy)).map(
    (strategy): SeededSale => ({ name: `A ${strategy} sale`, strategy, purpose: 'shop', when: 'live', stock: 40 }),
  ),
];

/**
 * Every table of the admin console, with realistic data (sales of every strategy and purpose, upcoming,
 * live and ended, long names; orders of registered buyers and guests with long names), fits a 1280 px
 * window with every column in sight, and becomes one card per row at 390 px. The demonstration's chart
 * shows each strategy's name whole at both widths.
 */
describe('the admin console’s tables and charts fit a laptop and a phone in Chromium (real API, worker, Redis, MariaDB)', () => {
  const w = useStorefrontWorld({ priceCents: 129_900 });
  const sales: Sale[] = [];

  beforeAll(async () => {
    for (const { when, ...fields } of SALES) {
      const startsAt = { 'next year': 400 * 24 * HOUR, upcoming: 2 * HOUR, live: 0, ended: 0 }[when];
      const window = startsAt
        ? {
            startsAt: new Date(Date.now() + startsAt).toISOString(),
            endsAt: new Date(Date.now() + startsAt + HOUR).toISOString(),
          }
        : {};
      const sale = await w.createSale({ ...fields, perUserLimit: 2, ...window });
      if (when === 'ended') {
        const ended = await w.stack.client.call<Sale>('PATCH', `/api/admin/sales/${sale.id}`, {
          token: w.admin,
          json: { endsAt: new Date().toISOString() },
        });
        expect(ended.status).toBe(200);
      }
      sales.push(sale);
    }
    await buyOrders(sales[0]!);
  });

  /**
   * Asserts the table fits: no wider than its box, every heading, cell, link and button in sight, no cell
   * spilling, the page not scrolling sideways; at phone width (`cards`) every row a card.
   */
  async function fits(page: Page, selector: string, cards: boolean, what: string): Promise<TableFit> {
    const fit = await measureTable(page, selector);
    expect({ what, scrollWidth: fit.scrollWidth <= fit.clientWidth, fit }).toEqual({
      what,
      scrollWidth: true,
      fit,
    });
    expect({ what, outOfSight: fit.outOfSight, overflowingCells: fit.overflowingCells }).toEqual({
      what,
      outOfSight: [],
      overflowingCells: [],
    });
    expect(fit.bodyCells).toBeGreaterThan(0);
    if (cards) {
      expect({ what, rowLayouts: fit.rowLayouts }).toEqual({ what, rowLayouts: fit.rowLayouts.map(() => 'card') });
    } else {
      expect({ what, rowLayouts: fit.rowLayouts }).toEqual({ what, rowLayouts: fit.rowLayouts.map(() => 'row') });
      expect(fit.shownHeadings).toBeGreaterThan(0);
    }
    const widths = await pageWidth(page);
    expect({ what, widths }).toEqual({
      what,
      widths: { scrollWidth: widths.windowWidth, windowWidth: widths.windowWidth },
    });
    return fit;
  }

  for (const { prefix, context, cards } of WIDTHS) {
    it(`${prefix}: the sales list — every sale, every column and its Preload in sight${cards ? ', a card per sale' : ''}`, () =>
      w.harness.scenario(`${prefix}-sales-table`, async () => {
        const admin = await adminConsole(w, context);
        const table = admin.locator('table.admin-sales-table');
        for (const sale of sales) await table.getByRole('link', { name: sale.name, exact: true }).waitFor();
        await saveScreenshot(admin, `${prefix}-admin-sales-fit`);
        const fit = await fits(admin, 'table.admin-sales-table', cards, 'sales list');
        expect(fit.rowLayouts).toHaveLength(sales.length);
        if (!cards) {
          expect(await table.locator('thead th').allTextContents()).toEqual([
            'Sale',
            'Strategy',
            'Purpose',
            'Status',
            'Remaining',
            'Window',
            'Actions',
          ]);
        }
        // Every strategy is named, the unsafe ones as such; the ended sale says so; the big stock is grouped.
        for (const strategy of SALE_STRATEGIES) await table.getByText(strategy, { exact: false }).first().waitFor();
        expect(await table.getByText('UNSAFE', { exact: false }).count()).toBeGreaterThanOrEqual(2);
        await table.getByText('Ended', { exact: true }).waitFor();
        await table.getByText('249,996 / 250,000').waitFor(); // 4 of buyOrders
        expect(await table.getByRole('button', { name: 'Preload' }).count()).toBeGreaterThan(0);
      }));

    it(`${prefix}: a sale’s orders — long buyer names, guests and user ids in sight${cards ? ', a card per order' : ''}`, () =>
      w.harness.scenario(`${prefix}-orders-table`, async () => {
        const sale = sales[0]!; // redis-lua, live, with the orders of buyOrders
        const admin = await adminConsole(w, context);
        await admin.goto(`/admin/sales/${sale.id}/orders`);
        const table = admin.getByRole('table', { name: 'Orders of the sale' });
        await table.getByText('Maximiliana Bartholomew-Featherstonehaugh', { exact: false }).first().waitFor();
        await saveScreenshot(admin, `${prefix}-admin-orders-fit`);
        const fit = await fits(admin, 'main table', cards, 'orders of the sale');
        expect(fit.rowLayouts).toHaveLength(4);

        await admin.goto(`/admin/sales/${sale.id}`);
        await admin.getByRole('heading', { name: 'Orders by status' }).waitFor();
        await saveScreenshot(admin, `${prefix}-admin-dashboard-fit`);
        await fits(admin, '.dashboard-grid table', false, 'orders by status');
      }));
  }

  it('the dashboard charts whole purchases per second (3 purchases are 3), the funnel and the latency, at 1280 and 390 px', () =>
    w.harness.scenario('dashboard-chart', async () => {
      for (const { prefix, context } of WIDTHS) {
        // Bought just before the look: the chart shows the last minute.
        const sale = await w.createSale({ name: `Chart check (${prefix}): three buyers`, stock: 10, perUserLimit: 1 });
        const guests = await Promise.all(['Ann', 'Bob', 'Cy'].map((name) => w.stack.client.guest(name)));
        for (const guest of guests) expect((await w.stack.client.buy(sale.id, guest.token)).status).toBe(202);
        await w.ordersWritten(sale.id, 3);
        const admin = await adminConsole(w, context);
        await admin.goto(`/admin/sales/${sale.id}`);
        const chart = admin.locator('.rate-chart');
        // Counted, not derived: the caption counts the 3 purchases; the axis counts whole purchases.
        await chart.getByText(/; 3 purchases in the last minute/).waitFor();
        const drawn = await waitFor(
          'the bars drawn',
          () => barChart(admin),
          (bars) => bars.bars > 0,
          10_000,
        );
        expect(drawn.ticks.length).toBeGreaterThan(1);
        expect({ prefix, ticks: drawn.ticks.filter((tick) => !/^\d+$/.test(tick)) }).toEqual({ prefix, ticks: [] });
        expect(Math.max(...drawn.ticks.map(Number))).toBeGreaterThanOrEqual(1);
        await saveElementScreenshot(chart, `${prefix}-admin-dashboard-chart`);
        const widths = await pageWidth(admin);
        expect(widths.scrollWidth).toBe(widths.windowWidth);

        // The funnel's bars, each step named whole beside its bar.
        const funnel = admin.getByRole('figure', { name: 'Sale funnel' });
        await funnel.getByText('Reserved: 3 purchases').waitFor();
        const funnelBars = await waitFor(
          'the funnel drawn',
          () => barChart(admin, '.funnel-chart'),
          (bars) => bars.bars > 0,
          10_000,
        );
        expect(funnelBars.ticks).toEqual(['Reserved', 'Written', 'Paid']);
        const steps = await chartLabels(admin, '.funnel-chart');
        expect({ prefix, cut: steps.cut, overlapping: steps.overlapping }).toEqual({
          prefix,
          cut: [],
          overlapping: [],
        });
        await saveElementScreenshot(funnel, `${prefix}-admin-dashboard-funnel`);

        // A reservation timed while the page samples: the latency chart draws its lines.
        const late = await w.stack.client.guest('Di');
        expect((await w.stack.client.buy(sale.id, late.token)).status).toBe(202);
        await waitFor(
          'the latency lines drawn',
          () => drawnLines(admin, '.latency-chart'),
          (lines) => lines > 0,
          15_000,
        );
        await admin.getByRole('figure', { name: 'Reservation latency' }).getByText(/^p95 /).waitFor();
        await saveElementScreenshot(admin.locator('.live-charts'), `${prefix}-admin-dashboard-live-charts`);
        const withCharts = await pageWidth(admin);
        expect({ prefix, scrollWidth: withCharts.scrollWidth }).toEqual({
          prefix,
          scrollWidth: withCharts.windowWidth,
        });
      }
    }));

  it('the oversell demo: its results table fits, and the chart names every strategy whole, at 1280 and 390 px', () =>
    w.harness.scenario('demo-fit', async () => {
      const started = await w.stack.client.call<{ id: string }>('POST', '/api/admin/demo-runs', {
        token: w.admin,
        json: { stock: 5, buyers: 40 },
      });
      expect(started.status).toBe(202);
      await waitFor(
        'the demo run to finish',
        async () =>
          (
            await w.stack.client.call<DemoRunReport>('GET', `/api/admin/demo-runs/${started.body.id}`, {
              token: w.admin,
            })
          ).body.status,
        (status) => status !== 'running',
        120_000,
      );
      for (const { prefix, context, cards } of WIDTHS) {
        const admin = await adminConsole(w, context as BrowserContextOptions);
        await admin.goto(`/admin/demo?run=${started.body.id}`);
        await admin.getByRole('heading', { name: 'Results: 40 buyers, 5 units per sale' }).waitFor();
        const strategies = await admin
          .locator('tr[data-strategy]')
          .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-strategy') ?? ''));
        expect(strategies.length).toBeGreaterThanOrEqual(7);
        const labels = await waitFor(
          'the chart drawn',
          () => chartLabels(admin, '.demo-chart'),
          (drawn) => drawn.texts.length >= strategies.length,
          10_000,
        );
        await saveScreenshot(admin, `${prefix}-admin-demo-fit`);
        await saveElementScreenshot(admin.locator('.demo-chart'), `${prefix}-admin-demo-chart`);
        expect({ prefix, texts: [...labels.texts].sort() }).toEqual({ prefix, texts: [...strategies].sort() });
        expect({ prefix, cut: labels.cut, overlapping: labels.overlapping }).toEqual({
          prefix,
          cut: [],
          overlapping: [],
        });
        await fits(admin, '.demo-table', cards, `demo results at ${prefix} width`);
      }
    }));

  /** Four written orders of the sale: registered buyers and guests, some with names as long as allowed (64). */
  async function buyOrders(sale: Sale) {
    const buyers = [
      { name: 'Maximiliana Bartholomew-Featherstonehaugh of Upper Wickham', register: true },
      { name: 'Wolfeschlegelsteinhausenbergerdorff Hubert Blaine', register: false },
      { name: 'Ada', register: false },
      { name: 'Jean-Baptiste Emmanuel Zorg', register: true },
    ];
    for (const buyer of buyers) {
      const session = buyer.register
        ? (
            await w.stack.client.call<{ token: string }>('POST', '/api/auth/register', {
              json: { name: buyer.name, password: 'tables-must-fit' },
            })
          ).body
        : await w.stack.client.guest(buyer.name);
      const bought = await w.stack.client.buy(sale.id, session.token);
      expect(bought.status).toBe(202);
    }
    await w.ordersWritten(sale.id, buyers.length);
  }
});
