import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { http, HttpResponse } from 'msw';
import { sessionStore } from '../session/session-store';
import { renderApp } from '../test/render';
import { recordPosts, server } from '../test/server';
import { dashboardRefused, errorBody, makeSale } from './test-fixtures';

const listSales = () => http.get('/api/admin/sales', () => HttpResponse.json([makeSale()]));

describe('AdminLayout', () => {
  it('signs in with the admin password and opens the console', async () => {
    const signIn = recordPosts<{ password: string }>('/api/auth/admin', () =>
      HttpResponse.json({ token: 'admin-jwt' }, { status: 201 }),
    );
    server.use(signIn.handler, listSales());
    const user = userEvent.setup();
    renderApp('/admin');

    expect(await screen.findByRole('heading', { name: 'Admin sign-in' })).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Sign in' })).toBeDisabled();
    await user.type(screen.getByLabelText('Admin password'), 's3cret');
    await user.click(screen.getByRole('button', { name: 'Sign in' }));

    expect(await screen.findByRole('heading', { name: 'Sales' })).toBeInTheDocument();
    expect(signIn.sent.map((body) => body.password)).toEqual(['s3cret']);
    expect(sessionStore.getSnapshot().adminToken).toBe('admin-jwt');
    expect(screen.getByRole('navigation', { name: 'Admin' })).toBeInTheDocument();
  });

  it('says so when the password is wrong, and stays on the sign-in', async () => {
    server.use(
      http.post('/api/auth/admin', () => HttpResponse.json(errorBody('INVALID_CREDENTIALS'), { status: 401 })),
    );
    const user = userEvent.setup();
    renderApp('/admin');

    await user.type(await screen.findByLabelText('Admin password'), 'wrong');
    await user.keyboard('{Enter}');

    expect(await screen.findByRole('alert')).toHaveTextContent('That password is not right.');
    expect(screen.getByRole('heading', { name: 'Admin sign-in' })).toBeInTheDocument();
    expect(sessionStore.getSnapshot().adminToken).toBeNull();
  });

  it('links to the console pages, the queue dashboard (logged in by header, in a new tab) and the API docs', async () => {
    const boardLogins: (string | null)[] = [];
    server.use(
      listSales(),
      http.post('/admin/queues/login', ({ request }) => {
        boardLogins.push(request.headers.get('authorization'));
        return new HttpResponse(null, { status: 204 });
      }),
    );
    renderApp('/admin', { adminToken: 'admin jwt' });

    const nav = await screen.findByRole('navigation', { name: 'Admin' });
    expect(within(nav).getByRole('link', { name: 'Sales' })).toHaveAttribute('href', '/admin');
    expect(within(nav).getByRole('link', { name: 'Sales' })).toHaveAttribute('aria-current', 'page');
    expect(within(nav).getByRole('link', { name: 'New sale' })).toHaveAttribute('href', '/admin/sales/new');
    const queues = within(nav).getByRole('link', { name: 'Queue dashboard' });
    // No token in the URL: the board's cookie was set by a POST carrying it in a header.
    expect(queues).toHaveAttribute('href', '/admin/queues');
    await waitFor(() => expect(boardLogins).toContain('Bearer admin jwt'));
    expect(queues).toHaveAttribute('target', '_blank');
    expect(queues).toHaveAttribute('rel', 'noopener noreferrer');
    expect(queues).toHaveAccessibleDescription('Opens in a new tab');
    expect(within(nav).getByRole('link', { name: 'API docs' })).toHaveAttribute('href', '/docs');
    await screen.findByRole('link', { name: 'Trail sneakers' });
  });

  it('signs out', async () => {
    server.use(listSales());
    const user = userEvent.setup();
    // No shopper signed in: the header's own "Sign out" is the shopper's.
    renderApp('/admin', { adminToken: 'admin-jwt', guest: null });

    await user.click(await screen.findByRole('button', { name: 'Sign out' }));

    expect(screen.getByRole('heading', { name: 'Admin sign-in' })).toBeInTheDocument();
    expect(sessionStore.getSnapshot().adminToken).toBeNull();
  });

  it('asks to sign in again when the API says the admin token expired', async () => {
    server.use(dashboardRefused('s-1', 'UNAUTHENTICATED', 401));
    renderApp('/admin/sales/s-1', { adminToken: 'expired-jwt' });

    expect(await screen.findByRole('heading', { name: 'Admin sign-in' })).toBeInTheDocument();
    expect(sessionStore.getSnapshot().adminToken).toBeNull();
  });
});
