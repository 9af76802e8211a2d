import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { http, HttpResponse } from 'msw';
import { renderApp } from '../test/render';
import { server } from '../test/server';
import { errorBody, makeSale } from './test-fixtures';

const sneakers = makeSale();
const unsafe = makeSale({
  id: 's-2',
  name: 'Oversell demo',
  strategy: 'naive-unsafe',
  status: 'upcoming',
  remaining: 10,
  stock: 10,
  startsAt: '2030-02-01T10:00:00.000Z',
  endsAt: '2030-02-01T12:00:00.000Z',
});

describe('AdminSalesPage', () => {
  it('lists every sale, newest start first, with its strategy, status and stock', async () => {
    server.use(http.get('/api/admin/sales', () => HttpResponse.json([sneakers, unsafe])));
    renderApp('/admin', { adminToken: 'admin-jwt' });

    expect(await screen.findByRole('heading', { name: 'Sales', level: 1 })).toBeInTheDocument();
    const rows = within(await screen.findByRole('table'))
      .getAllByRole('row')
      .slice(1);
    expect(rows.map((row) => within(row).getByRole('rowheader').textContent)).toEqual([
      'Oversell demo',
      'Trail sneakers',
    ]);
    expect(within(rows[0] as HTMLElement).getByRole('link', { name: 'Oversell demo' })).toHaveAttribute(
      'href',
      '/admin/sales/s-2',
    );
    expect(rows[0]).toHaveTextContent('UNSAFE');
    expect(rows[0]).toHaveTextContent('Coming soon');
    expect(rows[1]).toHaveTextContent('redis-lua');
    expect(rows[1]).toHaveTextContent('Live now');
    expect(rows[1]).toHaveTextContent('37 / 100');
    expect(within(rows[1] as HTMLElement).getByRole('button', { name: 'Preload' })).toHaveAccessibleDescription(
      'Trail sneakers',
    );
  });

  it('offers Preload only for a sale Redis still sells: not an ended one, not one sold from MySQL', async () => {
    const ended = makeSale({ id: 's-3', name: 'Last week', status: 'ended', startsAt: '2029-01-01T10:00:00.000Z' });
    server.use(http.get('/api/admin/sales', () => HttpResponse.json([sneakers, unsafe, ended])));
    renderApp('/admin', { adminToken: 'admin-jwt' });

    const table = await screen.findByRole('table');
    const preloadOf = (name: string) =>
      within(within(table).getByRole('row', { name: new RegExp(name) })).queryByRole('button', { name: 'Preload' });
    expect(preloadOf('Trail sneakers')).toBeInTheDocument();
    expect(preloadOf('Oversell demo')).not.toBeInTheDocument();
    expect(preloadOf('Last week')).not.toBeInTheDocument();
  });

  it('filters by purpose: the test data of k6, the bench and the demo, kept in the URL', async () => {
    const k6Sale = makeSale({ id: 's-3', name: 'k6 burst x1', purpose: 'load-test', status: 'ended' });
    const asked: string[] = [];
    server.use(
      http.get('/api/admin/sales', ({ request }) => {
        const purpose = new URL(request.url).searchParams.get('purpose');
        asked.push(purpose ?? 'all');
        return HttpResponse.json(purpose === 'load-test' ? [k6Sale] : [sneakers, k6Sale]);
      }),
    );
    const user = userEvent.setup();
    renderApp('/admin', { adminToken: 'admin-jwt' });

    expect(await screen.findByRole('rowheader', { name: 'k6 burst x1' })).toBeInTheDocument();
    expect(screen.getByRole('rowheader', { name: 'Trail sneakers' })).toBeInTheDocument();
    await user.selectOptions(screen.getByLabelText('Show'), 'Load test (k6)');

    expect(await screen.findByRole('rowheader', { name: 'k6 burst x1' })).toHaveTextContent('k6 burst x1');
    await screen.findByText('Load test (k6)', { selector: 'td' });
    expect(screen.queryByRole('rowheader', { name: 'Trail sneakers' })).not.toBeInTheDocument();
    expect(asked).toEqual(['all', 'load-test']);
  });

  it("preloads a sale and reports Redis's new stock", async () => {
    const preloaded: string[] = [];
    server.use(
      http.get('/api/admin/sales', () => HttpResponse.json([sneakers])),
      http.post('/api/admin/sales/:id/preload', ({ params, request }) => {
        preloaded.push(`${String(params.id)} ${request.headers.get('authorization')}`);
        return HttpResponse.json({ ...sneakers, remaining: 40 });
      }),
    );
    const user = userEvent.setup();
    renderApp('/admin', { adminToken: 'admin-jwt' });

    await user.click(await screen.findByRole('button', { name: 'Preload' }));

    expect(await screen.findByText(/Preloaded “Trail sneakers”: Redis now holds 40 of 100 units/)).toBeVisible();
    expect(preloaded).toEqual(['s-1 Bearer admin-jwt']);
  });

  it('says when a preload fails', async () => {
    server.use(
      http.get('/api/admin/sales', () => HttpResponse.json([sneakers])),
      http.post('/api/admin/sales/:id/preload', () => HttpResponse.json(errorBody('UNAVAILABLE'), { status: 503 })),
    );
    const user = userEvent.setup();
    renderApp('/admin', { adminToken: 'admin-jwt' });

    await user.click(await screen.findByRole('button', { name: 'Preload' }));

    expect(await screen.findByRole('alert')).toHaveTextContent('Could not preload “Trail sneakers”');
  });

  it('marks a sale with a waiting room', async () => {
    const roomSale = makeSale({ id: 's-3', name: 'Queued drop', waitingRoom: { admitPerSecond: 5, passSeconds: 60 } });
    server.use(http.get('/api/admin/sales', () => HttpResponse.json([sneakers, roomSale])));
    renderApp('/admin', { adminToken: 'admin-jwt' });

    const withRoom = await screen.findByRole('rowheader', { name: /Queued drop/ });
    expect(within(withRoom).getByText('room')).toHaveAttribute('title', 'Buyers wait in a waiting room');
    expect(within(screen.getByRole('rowheader', { name: 'Trail sneakers' })).queryByText('room')).toBeNull();
  });

  it('invites to create the first sale when there is none', async () => {
    server.use(http.get('/api/admin/sales', () => HttpResponse.json([])));
    renderApp('/admin', { adminToken: 'admin-jwt' });

    expect(await screen.findByRole('heading', { name: 'No sales yet' })).toBeInTheDocument();
    expect(await screen.findByRole('link', { name: 'Create a sale' })).toHaveAttribute('href', '/admin/sales/new');
    expect(screen.queryByRole('table')).not.toBeInTheDocument();
  });
});
