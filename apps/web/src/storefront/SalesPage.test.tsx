import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { http, HttpResponse } from 'msw';
import { aSale } from '../test/api-fixtures';
import { renderApp } from '../test/render';
import { recordPosts, server } from '../test/server';
import { effectiveStatus } from './effective-status';

describe('the sales list', () => {
  it('shows live sales first, an upcoming one with its countdown, and labels an unsafe strategy', async () => {
    server.use(
      http.get('/api/sales', () =>
        HttpResponse.json([
          aSale({ id: '1', name: 'Later', status: 'upcoming', startsAt: new Date(Date.now() + 90_000).toISOString() }),
          aSale({ id: '2', name: 'Now', strategy: 'naive-unsafe' }),
        ]),
      ),
    );
    renderApp('/');
    const cards = await screen.findAllByRole('article');
    expect(cards.map((card) => within(card).getByRole('heading').textContent)).toEqual(['Now', 'Later']);
    expect(within(cards[0]!).getByText(/UNSAFE: oversells/)).toBeInTheDocument();
    expect(within(cards[1]!).getByText('Coming soon')).toBeInTheDocument();
    expect(within(cards[1]!).getByText(/^Starts in$|Starts in/, { selector: 'span[aria-hidden]' })).toHaveTextContent(
      /Starts in 1:(29|30)/,
    );
  });

  it('explains a failure to load instead of showing an empty shop', async () => {
    server.use(
      http.get('/api/sales', () =>
        HttpResponse.json({ error: { code: 'UNAVAILABLE', message: 'x' } }, { status: 503 }),
      ),
    );
    renderApp('/');
    expect(await screen.findByRole('alert')).toHaveTextContent('The shop is briefly unavailable.');
  });
});

describe('effectiveStatus', () => {
  const sale = aSale({ status: 'upcoming', startsAt: '2030-01-01T00:00:00Z', endsAt: '2030-01-01T01:00:00Z' });

  it('opens an upcoming sale when the server clock reaches its start, and closes it at the end', () => {
    expect(effectiveStatus(sale, Date.parse('2029-12-31T23:59:59Z'))).toBe('upcoming');
    expect(effectiveStatus(sale, Date.parse('2030-01-01T00:00:00Z'))).toBe('live');
    expect(effectiveStatus({ ...sale, remaining: 0 }, Date.parse('2030-01-01T00:00:01Z'))).toBe('sold_out');
    expect(effectiveStatus(sale, Date.parse('2030-01-01T01:00:00Z'))).toBe('ended');
  });
});

describe('guest sign-in', () => {
  it('signs in with a name and returns to the page that asked', async () => {
    const signIn = recordPosts<{ name: string }>('/api/auth/guest', () =>
      HttpResponse.json({ token: 'jwt', user: { id: 'u-9', name: 'Grace' } }, { status: 201 }),
    );
    server.use(
      signIn.handler,
      http.get('/api/orders', () => HttpResponse.json([])),
      http.get('/api/sales', () => HttpResponse.json([])),
    );
    const user = userEvent.setup();
    const { router } = renderApp('/sign-in?mode=guest&next=/orders', { guest: null });
    await user.type(await screen.findByLabelText('Your name'), '  Grace ');
    await user.click(screen.getByRole('button', { name: 'Continue' }));
    expect(await screen.findByRole('heading', { name: 'My orders' })).toBeInTheDocument();
    expect(signIn.sent.map((body) => body.name)).toEqual(['Grace']);
    expect(router.state.location.pathname).toBe('/orders');
    expect(screen.getByText('Grace')).toBeInTheDocument(); // the header shows who is signed in
  });

  it("names each order's sale, also one that has ended and so is no longer in the storefront's list", async () => {
    const ended = aSale({ id: '12', name: 'Last week’s sneakers', status: 'ended' });
    server.use(
      http.get('/api/sales', () => HttpResponse.json([])),
      http.get('/api/sales/12', () => HttpResponse.json(ended)),
      http.get('/api/orders', () =>
        HttpResponse.json([
          {
            orderNo: 'S12-01ABC',
            saleId: '12',
            userId: 'u-1',
            quantity: 1,
            amountCents: 4999,
            status: 'PAID',
            createdAt: '2026-11-18T10:00:00.000Z',
          },
        ]),
      ),
    );
    renderApp('/orders');
    expect(await screen.findByRole('link', { name: 'Last week’s sneakers' })).toHaveAttribute('href', '/sales/12');
  });

  it('never follows a `next` that leaves the site', async () => {
    server.use(
      http.post('/api/auth/guest', () =>
        HttpResponse.json({ token: 'jwt', user: { id: 'u-9', name: 'G' } }, { status: 201 }),
      ),
      http.get('/api/sales', () => HttpResponse.json([])),
    );
    const user = userEvent.setup();
    const { router } = renderApp('/sign-in?mode=guest&next=//evil.example', { guest: null });
    await user.type(await screen.findByLabelText('Your name'), 'G');
    await user.click(screen.getByRole('button', { name: 'Continue' }));
    await screen.findByRole('heading', { name: 'Flash sales' });
    expect(router.state.location.pathname).toBe('/');
  });
});
