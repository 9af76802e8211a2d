import { fireEvent, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { http, HttpResponse } from 'msw';
import type { CreateSaleRequest } from '@flash-sale/contract';
import { renderApp } from '../test/render';
import { recordPosts, server } from '../test/server';
import { errorBody, makeCreateSaleRequest, makeDashboard, makeSale } from './test-fixtures';

/** Records what the form posts, answering with `respond`. */
function createSaleEndpoint(respond: (body: CreateSaleRequest) => Response) {
  const endpoint = recordPosts('/api/admin/sales', respond);
  server.use(endpoint.handler);
  return endpoint.sent;
}

function setDateTime(label: string, value: string) {
  // user-event cannot type into datetime-local inputs in jsdom; a change event is what the picker fires.
  fireEvent.change(screen.getByLabelText(label), { target: { value } });
}

describe('CreateSalePage', () => {
  it('shows each mistake under its field, focuses the first, and sends nothing', async () => {
    const sent = createSaleEndpoint(() => HttpResponse.json(makeSale(), { status: 201 }));
    const user = userEvent.setup();
    renderApp('/admin/sales/new', { adminToken: 'admin-jwt' });

    expect(await screen.findByRole('heading', { name: 'New sale' })).toBeInTheDocument();
    await user.clear(screen.getByLabelText('Stock'));
    await user.type(screen.getByLabelText('Stock'), '0');
    setDateTime('Starts at', '2030-01-15T10:00');
    setDateTime('Ends at', '2030-01-15T09:00');
    await user.click(screen.getByRole('button', { name: 'Create sale' }));

    const name = screen.getByLabelText('Name');
    expect(name).toHaveAttribute('aria-invalid', 'true');
    expect(name).toHaveAccessibleDescription('Enter a name');
    expect(name).toHaveFocus();
    expect(screen.getByLabelText('Price (USD)')).toHaveAccessibleDescription(/Enter a price/);
    expect(screen.getByLabelText('Stock')).toHaveAccessibleDescription(/At least 1/);
    expect(screen.getByLabelText('Ends at')).toHaveAccessibleDescription('The sale must end after it starts');
    expect(screen.getByLabelText('Starts at')).toHaveAttribute('aria-invalid', 'false');
    expect(sent).toEqual([]);
  });

  it('warns that naive-unsafe oversells when it is chosen', async () => {
    const user = userEvent.setup();
    renderApp('/admin/sales/new', { adminToken: 'admin-jwt' });

    const strategy = await screen.findByLabelText('Strategy');
    expect(strategy).toHaveValue('redis-lua');
    expect(screen.getByRole('option', { name: 'redis-lua (recommended)' })).toBeInTheDocument();
    expect(screen.queryByText(/naive-unsafe oversells/)).not.toBeInTheDocument();

    await user.selectOptions(strategy, 'naive-unsafe (UNSAFE)');

    expect(screen.getByText(/naive-unsafe oversells/)).toBeVisible();
    expect(strategy).toHaveAccessibleDescription(/only to demonstrate that problem/);

    await user.selectOptions(strategy, 'redis-lock-unfenced (UNSAFE)');
    expect(screen.getByText(/redis-lock-unfenced oversells/)).toBeVisible();
    expect(strategy).toHaveAccessibleDescription(/paused longer than the lock lives/);

    await user.selectOptions(strategy, 'redis-lock');
    expect(screen.queryByText(/redis-lock-unfenced oversells/)).not.toBeInTheDocument();
  });

  it('creates the sale with the price in cents and the times in UTC, then opens its dashboard', async () => {
    const created = makeSale({ id: 's-42', name: 'Trail sneakers' });
    const sent = createSaleEndpoint(() => HttpResponse.json(created, { status: 201 }));
    server.use(http.get('/api/admin/sales/s-42/dashboard', () => HttpResponse.json(makeDashboard({ sale: created }))));
    const user = userEvent.setup();
    const { router } = renderApp('/admin/sales/new', { adminToken: 'admin-jwt' });

    await user.type(await screen.findByLabelText('Name'), 'Trail sneakers');
    await user.type(screen.getByLabelText('Price (USD)'), '49.99');
    await user.clear(screen.getByLabelText('Stock'));
    await user.type(screen.getByLabelText('Stock'), '250');
    await user.clear(screen.getByLabelText('Per-user limit'));
    await user.type(screen.getByLabelText('Per-user limit'), '2');
    setDateTime('Starts at', '2030-01-15T10:00');
    setDateTime('Ends at', '2030-01-15T12:30');
    await user.selectOptions(screen.getByLabelText('Strategy'), 'db-pessimistic');
    await user.click(screen.getByRole('button', { name: 'Create sale' }));

    expect(await screen.findByRole('heading', { name: 'Trail sneakers', level: 1 })).toBeInTheDocument();
    expect(router.state.location.pathname).toBe('/admin/sales/s-42');
    expect(sent).toEqual([
      makeCreateSaleRequest({
        stock: 250,
        endsAt: new Date(2030, 0, 15, 12, 30).toISOString(),
        strategy: 'db-pessimistic',
      }),
    ]);
    expect(Number.isInteger(sent[0]?.priceCents)).toBe(true);
  });

  it("disables the button while sending, then shows the server's refusal and stays on the form", async () => {
    let answer = () => {};
    const answered = new Promise<void>((resolve) => (answer = resolve));
    server.use(
      http.post('/api/admin/sales', async () => {
        await answered;
        return HttpResponse.json(errorBody('VALIDATION_FAILED', 'endsAt is wrong'), { status: 400 });
      }),
    );
    const user = userEvent.setup();
    renderApp('/admin/sales/new', { adminToken: 'admin-jwt' });

    await user.type(await screen.findByLabelText('Name'), 'Trail sneakers');
    await user.type(screen.getByLabelText('Price (USD)'), '10');
    await user.click(screen.getByRole('button', { name: 'Create sale' }));
    expect(await screen.findByRole('button', { name: 'Creating…' })).toBeDisabled();
    answer();

    const alert = await screen.findByRole('alert');
    expect(alert).toHaveTextContent('The sale was not created');
    expect(alert).toHaveTextContent('Some of the details are not valid.');
    expect(screen.getByRole('button', { name: 'Create sale' })).toBeEnabled();
  });
});
