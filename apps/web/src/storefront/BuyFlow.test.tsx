import { ErrorCode } from '@flash-sale/contract';
import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { HttpResponse } from 'msw';
import { aSale, errorBody } from '../test/api-fixtures';
import { fakeShop } from '../test/fake-shop';
import { renderApp, TEST_GUEST } from '../test/render';

const buyButton = () => screen.getByRole('button', { name: /buy now/i });

/** A shopper opens the sale's page and clicks Buy now once: their order shows. */
async function buyOnce() {
  const shop = fakeShop();
  const user = userEvent.setup();
  renderApp('/sales/7');
  await user.click(await screen.findByRole('button', { name: 'Buy now' }));
  expect(await screen.findByRole('heading', { name: 'Your order' })).toBeInTheDocument();
  return { shop, user };
}

describe('the buy flow on a sale page', () => {
  it('asks a signed-out visitor to sign in first, and sends no purchase', async () => {
    const shop = fakeShop();
    renderApp('/sales/7', { guest: null });
    expect(await screen.findByRole('link', { name: 'Sign in to buy' })).toHaveAttribute(
      'href',
      '/sign-in?next=%2Fsales%2F7',
    );
    expect(screen.queryByRole('button', { name: /buy now/i })).not.toBeInTheDocument();
    expect(shop.calls.tokens).toBe(0);
  });

  it('keeps Buy closed with a countdown before the start', async () => {
    fakeShop({ sale: aSale({ status: 'upcoming', startsAt: new Date(Date.now() + 3_600_000).toISOString() }) });
    renderApp('/sales/7');
    expect(await screen.findByRole('heading', { name: 'Limited sneakers' })).toBeInTheDocument();
    expect(buyButton()).toBeDisabled();
    expect(screen.getByText('Starts in about 60 minutes')).toBeInTheDocument();
  });

  it('fetches a token, buys with it, follows the order from QUEUED to PENDING_PAYMENT, and pays', async () => {
    const { shop, user } = await buyOnce();
    expect(shop.calls.tokens).toBe(1);
    expect(shop.calls.purchases).toEqual([{ token: 'submit-1', quantity: 1 }]);
    expect(screen.getByRole('status')).toHaveTextContent('Reserved — confirming');
    // The tracker polls the QUEUED order until the worker has written it.
    await waitFor(() => expect(screen.getByRole('status')).toHaveTextContent('Awaiting payment'), { timeout: 3_000 });

    await user.click(screen.getByRole('button', { name: 'Pay $49.99' }));
    await waitFor(() => expect(screen.getByRole('status')).toHaveTextContent('Paid'));
    expect(shop.calls.pays).toBe(1);
    expect(screen.queryByRole('button', { name: /^Pay/ })).not.toBeInTheDocument();
  });

  it('sends one purchase for a double click', async () => {
    const shop = fakeShop();
    const user = userEvent.setup();
    renderApp('/sales/7');
    await user.dblClick(await screen.findByRole('button', { name: 'Buy now' }));
    await screen.findByRole('heading', { name: 'Your order' });
    expect(shop.calls.tokens).toBe(1);
    expect(shop.calls.purchases).toHaveLength(1);
  });

  it.each([
    [410, ErrorCode.SoldOut, 'Sold out — every unit has been claimed.'],
    [409, ErrorCode.LimitReached, 'You already have as many as one customer may buy in this sale.'],
    [409, ErrorCode.SaleNotStarted, 'This sale has not started yet.'],
    [410, ErrorCode.SaleEnded, 'This sale has ended.'],
    [503, ErrorCode.Unavailable, 'The shop is briefly unavailable.'],
    [403, ErrorCode.TokenInvalid, 'Your checkout session expired.'],
  ])('words a %i %s refusal for the shopper', async (status, code, message) => {
    fakeShop({ purchaseAnswers: [() => HttpResponse.json(errorBody(code, 'server words'), { status })] });
    const user = userEvent.setup();
    renderApp('/sales/7');
    await user.click(await screen.findByRole('button', { name: 'Buy now' }));
    expect(await screen.findByRole('alert')).toHaveTextContent(message);
    expect(screen.queryByText('server words')).not.toBeInTheDocument();
    expect(buyButton()).toBeEnabled(); // the shopper may try again
  });

  it('waits out a 429 and retries with the same token, then says how long to wait if it persists', async () => {
    const shop = fakeShop({
      purchaseAnswers: [
        () => HttpResponse.json(errorBody(ErrorCode.RateLimited), { status: 429, headers: { 'retry-after': '1' } }),
      ],
    });
    const user = userEvent.setup();
    renderApp('/sales/7');
    await user.click(await screen.findByRole('button', { name: 'Buy now' }));
    expect(await screen.findByRole('button', { name: /trying again in 1 s/ })).toBeDisabled();
    expect(await screen.findByRole('alert', {}, { timeout: 5_000 })).toHaveTextContent(
      'Too many requests right now. Please wait 1 s and try again.',
    );
    // The first attempt and two automatic retries, all with the one token.
    expect(shop.calls.purchases.map((call) => call.token)).toEqual(['submit-1', 'submit-1', 'submit-1']);
    expect(shop.calls.tokens).toBe(1);
  }, 15_000);

  it('a load-shedding 503 with retry-after is retried with the same token and the purchase goes through', async () => {
    const shop = fakeShop({
      purchaseAnswers: [
        () => HttpResponse.json(errorBody(ErrorCode.Unavailable), { status: 503, headers: { 'retry-after': '1' } }),
        () => undefined, // then the fake shop's own answer: accepted as QUEUED
      ],
    });
    const user = userEvent.setup();
    renderApp('/sales/7');
    await user.click(await screen.findByRole('button', { name: 'Buy now' }));
    expect(await screen.findByRole('button', { name: /trying again in 1 s/ })).toBeDisabled();
    // Accepted on the retry: the page follows that order (this fake shop has no row for it).
    expect(await screen.findByRole('heading', { name: 'Your order' }, { timeout: 5_000 })).toBeInTheDocument();
    expect(shop.calls.purchases.map((call) => call.token)).toEqual(['submit-1', 'submit-1']);
    expect(shop.calls.tokens).toBe(1);
  }, 15_000);

  it('retries with the same submit token when the outcome was unknown (503), so a retry cannot buy twice', async () => {
    const shop = fakeShop({
      purchaseAnswers: [
        () => HttpResponse.json(errorBody(ErrorCode.Unavailable), { status: 503 }),
        () => HttpResponse.json({ orderNo: 'S7-RETRIED', status: 'QUEUED' }, { status: 202 }),
      ],
    });
    const user = userEvent.setup();
    renderApp('/sales/7');
    await user.click(await screen.findByRole('button', { name: 'Buy now' }));
    expect(await screen.findByText(/retries the same purchase and can never buy twice/)).toBeInTheDocument();
    await user.click(buyButton());
    await waitFor(() => expect(shop.calls.purchases).toHaveLength(2));
    expect(shop.calls.tokens).toBe(1);
    expect(shop.calls.purchases.map((call) => call.token)).toEqual(['submit-1', 'submit-1']);
  });

  it('fetches a fresh token after a definitive refusal', async () => {
    const shop = fakeShop({
      purchaseAnswers: [() => HttpResponse.json(errorBody(ErrorCode.TokenInvalid), { status: 403 })],
    });
    const user = userEvent.setup();
    renderApp('/sales/7');
    await user.click(await screen.findByRole('button', { name: 'Buy now' }));
    await screen.findByRole('alert');
    await user.click(buyButton());
    await waitFor(() => expect(shop.calls.purchases).toHaveLength(2));
    expect(shop.calls.purchases.map((call) => call.token)).toEqual(['submit-1', 'submit-2']);
  });

  it('finishes a purchase interrupted by a reload with the same token, and shows its order', async () => {
    const shop = fakeShop();
    // What the page saved before the reload cut it off: the token of a purchase whose answer never came.
    localStorage.setItem(
      `flashbuy.pending.${TEST_GUEST.user.id}.7`,
      JSON.stringify({
        token: 'submit-from-before',
        expiresAt: new Date(Date.now() + 60_000).toISOString(),
        quantity: 1,
      }),
    );
    renderApp('/sales/7');
    expect(await screen.findByRole('heading', { name: 'Your order' })).toBeInTheDocument();
    expect(shop.calls.tokens).toBe(0);
    expect(shop.calls.purchases).toEqual([{ token: 'submit-from-before', quantity: 1 }]);
    expect(localStorage.getItem(`flashbuy.pending.${TEST_GUEST.user.id}.7`)).toBeNull();
  });

  it('offers no Buy button once the shopper holds the most one customer may buy, only the reason and the order', async () => {
    const { shop } = await buyOnce();
    expect(await screen.findByText('You have 1 of 1 — the most one customer may buy here.')).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: /buy now/i })).not.toBeInTheDocument();
    expect(shop.calls.purchases).toHaveLength(1);
  });

  it('shows a sold-out sale as sold out with Buy closed', async () => {
    fakeShop({ sale: aSale({ status: 'sold_out', remaining: 0 }) });
    renderApp('/sales/7');
    expect(await screen.findByText('Sold out', { selector: 'strong' })).toBeInTheDocument();
    expect(buyButton()).toBeDisabled();
  });
});
