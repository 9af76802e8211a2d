import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { http, HttpResponse } from 'msw';
import type { SaleDashboard } from '@flash-sale/contract';
import { renderApp } from '../test/render';
import { server } from '../test/server';
import { dashboardRefused, makeAudit, makeDashboard, makeRoomState, makeSale } from './test-fixtures';

/** The value of a stat tile: <dt>label</dt><dd>value</dd>. */
function statValue(label: string): string | null | undefined {
  return screen.getByText(label, { selector: 'dt' }).nextElementSibling?.textContent;
}

/** Answers each poll with the next of `samples`, repeating the last one. */
function dashboardEndpoint(...samples: SaleDashboard[]) {
  let polls = 0;
  server.use(
    http.get('/api/admin/sales/s-1/dashboard', () => HttpResponse.json(samples[Math.min(polls++, samples.length - 1)])),
  );
}

describe('SaleDashboardPage', () => {
  it("shows the sale's stock, purchases, hand-off backlog and orders by status", async () => {
    dashboardEndpoint(makeDashboard({ handoff: { unwritten: 12, beingWritten: 3, failedJobs: 1 } }));
    renderApp('/admin/sales/s-1', { adminToken: 'admin-jwt' });

    expect(await screen.findByRole('heading', { name: 'Trail sneakers', level: 1 })).toBeInTheDocument();
    expect(await screen.findByText('Live now')).toBeInTheDocument();
    expect(screen.getByText('redis-lua')).toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'View in storefront' })).toHaveAttribute('href', '/sales/s-1');
    // The console's navigation has them too; the dashboard repeats them beside the sale.
    const queueLinks = screen.getAllByRole('link', { name: 'Queue dashboard' });
    expect(queueLinks).toHaveLength(2);
    for (const link of queueLinks) expect(link).toHaveAttribute('href', '/admin/queues');
    expect(screen.getAllByRole('link', { name: 'API docs' }).length).toBeGreaterThanOrEqual(2);

    expect(statValue('Remaining')).toBe('37');
    expect(screen.getByText('of 100')).toBeInTheDocument();
    expect(statValue('Purchases')).toBe('69');
    expect(statValue('Held')).toBe('55');
    expect(statValue('Unwritten')).toBe('12');
    expect(statValue('Being written')).toBe('3');
    expect(statValue('Writer jobs failed')).toBe('1');

    const orders = screen.getByRole('table', { name: 'Orders by status' });
    const countOf = (status: string) =>
      within(within(orders).getByRole('row', { name: new RegExp(status) })).getByRole('cell').textContent;
    expect(countOf('QUEUED')).toBe('8');
    expect(countOf('PENDING_PAYMENT')).toBe('20');
    expect(countOf('PAID')).toBe('35');
    expect(countOf('CANCELLED')).toBe('4');
    expect(countOf('EXPIRED')).toBe('2');
    expect(countOf('FAILED')).toBe('0');
  });

  it('gives the verdict when the books balance', async () => {
    dashboardEndpoint(makeDashboard());
    renderApp('/admin/sales/s-1', { adminToken: 'admin-jwt' });

    expect(await screen.findByText('Books balance — no oversell')).toBeInTheDocument();
    expect(screen.queryByText('Books do not balance')).not.toBeInTheDocument();
    expect(await screen.findByText(/checked at/)).toHaveTextContent(/checked at \d{2}:\d{2}:\d{2}/);
  });

  it('gives a failing verdict with the counts when the sale oversold', async () => {
    dashboardEndpoint(
      makeDashboard({
        sale: makeSale({ strategy: 'naive-unsafe', remaining: 0, status: 'sold_out' }),
        audit: makeAudit({ ok: false, oversold: 3, duplicateOrders: 1, lostReservations: 0, held: 103 }),
      }),
    );
    renderApp('/admin/sales/s-1', { adminToken: 'admin-jwt' });

    expect(await screen.findByText('Books do not balance')).toBeInTheDocument();
    expect(screen.queryByText('Books balance — no oversell')).not.toBeInTheDocument();
    const counts = within(await screen.findByRole('list'))
      .getAllByRole('listitem')
      .map((item) => item.textContent);
    expect(counts).toEqual(['3 units oversold', '1 duplicate order', '0 lost reservations']);
    expect(screen.getByText(/UNSAFE/)).toBeInTheDocument();
  });

  it('charts the purchases of each second as counted: 3 purchases are 3, never a smoothed 2.8', async () => {
    // Samples 1.07 s apart, as a poll drifts: a rate from the growth between them would be 3 / 1.07 = 2.8.
    dashboardEndpoint(
      makeDashboard({
        purchases: 100,
        sampledAt: '2030-01-15T10:05:00.930Z',
        history: [{ at: '2030-01-15T10:04:58.000Z', purchases: 12 }],
      }),
      makeDashboard({
        purchases: 103,
        sampledAt: '2030-01-15T10:05:02.000Z',
        history: [
          { at: '2030-01-15T10:04:58.000Z', purchases: 12 },
          { at: '2030-01-15T10:05:01.000Z', purchases: 3 },
        ],
      }),
    );
    renderApp('/admin/sales/s-1', { adminToken: 'admin-jwt' });

    const caption = () => screen.getByText(/^Last second/, { selector: 'figcaption' });
    expect(await screen.findByText(/^Last second/, { selector: 'figcaption' })).toHaveTextContent(
      'Last second: 0 purchases. Busiest second: 12 purchases; 12 purchases in the last minute.',
    );
    await waitFor(() => expect(statValue('Purchases')).toBe('103'), { timeout: 4_000 });
    expect(caption()).toHaveTextContent('Last second: 3 purchases. Busiest second: 12 purchases; 15 purchases');
    expect(caption().textContent).not.toMatch(/\d\.\d/);
  });

  it("shows a room sale's funnel, from the buyers who joined its room to the orders paid", async () => {
    dashboardEndpoint(
      makeDashboard({
        sale: makeSale({ waitingRoom: { admitPerSecond: 50, passSeconds: 120 } }),
        funnel: { joined: 1_250, admitted: 640, reserved: 69, written: 61, paid: 35 },
      }),
    );
    server.use(http.get('/api/admin/sales/s-1/queue', () => HttpResponse.json(makeRoomState())));
    renderApp('/admin/sales/s-1', { adminToken: 'admin-jwt' });

    const funnel = await screen.findByRole('figure', { name: 'Sale funnel' });
    const steps = within(within(funnel).getByRole('list', { name: 'Funnel steps' }))
      .getAllByRole('listitem')
      .map((step) => step.textContent);
    expect(steps).toEqual([
      'Joined the room: 1,250 buyers',
      'Admitted: 640 buyers',
      'Reserved: 69 purchases',
      'Written: 61 orders',
      'Paid: 35 orders',
    ]);
  });

  it('starts the funnel at the reservations for a sale without a room, and charts its latency, backlog and drift', async () => {
    dashboardEndpoint(
      makeDashboard({
        handoff: { unwritten: 12, beingWritten: 3, failedJobs: 0 },
        funnel: { reserved: 69, written: 61, paid: 35 },
        reservationLatency: { p50Ms: 0.42, p95Ms: 1.8, p99Ms: 4.25, calls: 1_320, windowSeconds: 10 },
      }),
    );
    renderApp('/admin/sales/s-1', { adminToken: 'admin-jwt' });

    const funnel = await screen.findByRole('figure', { name: 'Sale funnel' });
    expect(
      within(funnel)
        .getAllByRole('listitem')
        .map((step) => step.textContent),
    ).toEqual(['Reserved: 69 purchases', 'Written: 61 orders', 'Paid: 35 orders']);
    expect(screen.getByRole('figure', { name: 'Reservation latency' })).toHaveTextContent(
      'p95 1.8 ms · p50 0.42 ms · p99 4.25 ms over 1,320 calls in the last 10 s',
    );
    expect(screen.getByRole('figure', { name: 'Hand-off backlog' })).toHaveTextContent(
      'Now 12 reservations waiting to be written to MySQL (3 being written).',
    );
    expect(screen.getByRole('figure', { name: 'Drift' })).toHaveTextContent('Now 0 units between Redis and MySQL');
  });

  it('has no latency, backlog or drift to chart for a sale that sells from MySQL', async () => {
    dashboardEndpoint(
      makeDashboard({
        sale: makeSale({ strategy: 'db-pessimistic' }),
        funnel: { reserved: 69, written: 61, paid: 35 },
      }),
    );
    renderApp('/admin/sales/s-1', { adminToken: 'admin-jwt' });

    expect(await screen.findByText(/^db-pessimistic sells from MySQL/)).toBeInTheDocument();
    expect(screen.queryByRole('figure', { name: 'Reservation latency' })).not.toBeInTheDocument();
    expect(screen.getByRole('figure', { name: 'Sale funnel' })).toBeInTheDocument();
  });

  it('preloads the sale from its dashboard', async () => {
    dashboardEndpoint(makeDashboard());
    let preloads = 0;
    server.use(
      http.post('/api/admin/sales/s-1/preload', () => {
        preloads++;
        return HttpResponse.json(makeSale({ remaining: 37 }));
      }),
    );
    const user = userEvent.setup();
    renderApp('/admin/sales/s-1', { adminToken: 'admin-jwt' });

    await user.click(await screen.findByRole('button', { name: 'Preload' }));

    expect(await screen.findByText(/Redis now holds 37 of 100 units/)).toBeInTheDocument();
    expect(preloads).toBe(1);
  });

  it('offers no Preload and does not claim to be live once the sale has ended', async () => {
    dashboardEndpoint(makeDashboard({ sale: makeSale({ status: 'ended' }) }));
    renderApp('/admin/sales/s-1', { adminToken: 'admin-jwt' });

    expect(await screen.findByText(/^Sale ended · figures as of/)).toBeInTheDocument();
    expect(screen.queryByText(/Live, every second/)).not.toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Preload' })).not.toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'Orders' })).toHaveClass('button', { exact: true });
  });

  it('says so when there is no such sale', async () => {
    server.use(dashboardRefused('nope', 'SALE_NOT_FOUND', 404));
    renderApp('/admin/sales/nope', { adminToken: 'admin-jwt' });

    expect(await screen.findByRole('heading', { name: 'Sale not found' })).toBeInTheDocument();
    expect(await screen.findByRole('link', { name: 'Back to all sales' })).toHaveAttribute('href', '/admin');
  });
});
