import { ErrorCode, type Sale } from '@flash-sale/contract';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { HttpResponse } from 'msw';
import { aSale, aTicket, anAdmittedTicket, errorBody } from '../test/api-fixtures';
import { fakeShop } from '../test/fake-shop';
import { fakeWaitingRoom, inOrder } from '../test/fake-waiting-room';
import { renderApp } from '../test/render';

const ROOM = { admitPerSecond: 10, passSeconds: 120 };
const roomSale = (overrides: Partial<Sale> = {}) => aSale({ waitingRoom: ROOM, ...overrides });

const room = () => screen.getByRole('region', { name: /line|waiting room|turn|sold out/i });
const place = () => within(room()).getByText('Your place', { selector: 'dt' }).nextElementSibling?.textContent;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Opens the sale page of a room that places the buyer 5th, refuses the first poll (retry after 1 s), then places them 4th. */
function openRoomRefusingOnePoll(code: ErrorCode, status: number) {
  fakeShop({ sale: roomSale() });
  const queue = fakeWaitingRoom(
    '7',
    inOrder(
      aTicket({ position: 5 }),
      () => HttpResponse.json(errorBody(code), { status, headers: { 'retry-after': '1' } }),
      aTicket({ position: 4, pollAfterMs: 10_000 }),
    ),
  );
  renderApp('/sales/7');
  return queue;
}

describe('the waiting room on a sale page', () => {
  it('joins, shows the place, the wait and the progress, then buys with the pass once admitted', async () => {
    const shop = fakeShop({ sale: roomSale() });
    const queue = fakeWaitingRoom(
      '7',
      inOrder(
        aTicket({ position: 3, estimatedWaitSeconds: 90, pollAfterMs: 300 }),
        aTicket({ position: 2, estimatedWaitSeconds: 50, pollAfterMs: 300 }),
        anAdmittedTicket('pass-of-ada'),
      ),
    );
    const user = userEvent.setup();
    renderApp('/sales/7');

    expect(await screen.findByRole('heading', { name: 'You are in the line' })).toBeInTheDocument();
    expect(place()).toBe('3');
    expect(within(room()).getByText('about 2 minutes')).toBeInTheDocument();
    expect(within(room()).getByText(/When it is your turn you will have 2 minutes to buy\./)).toBeInTheDocument();
    expect(screen.getByText('You are number 3 in the line.')).toHaveAttribute('aria-live', 'polite');
    const progress = screen.getByRole('progressbar', { name: 'Your way to the front of the line' });
    expect(progress).toHaveAttribute('aria-valuenow', '0');
    expect(screen.queryByRole('button', { name: 'Buy now' })).not.toBeInTheDocument();

    // One place further: a third of the way from where the buyer started to the front.
    await waitFor(() => expect(place()).toBe('2'));
    expect(within(room()).getByText('less than a minute')).toBeInTheDocument();
    expect(screen.getByRole('progressbar')).toHaveAttribute('aria-valuenow', '33');
    expect(screen.getByRole('progressbar')).toHaveAttribute('aria-valuetext', '1 of 3 places moved');

    expect(await screen.findByRole('heading', { name: 'It is your turn to buy' })).toBeInTheDocument();
    expect(within(room()).getByText('Your turn ends in about 2 minutes')).toBeInTheDocument();
    expect(screen.queryByRole('progressbar')).not.toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Buy now' }));

    expect(await screen.findByRole('heading', { name: 'Your order' })).toBeInTheDocument();
    expect(shop.calls.tokenBodies).toEqual([{ pass: 'pass-of-ada' }]);
    expect(shop.calls.purchases).toEqual([{ token: 'submit-1', quantity: 1 }]);
    // Admitted, the ticket is not asked about again before the pass runs out.
    const requests = queue.calls.length;
    await pause(800);
    expect(queue.calls.length).toBe(requests);
    expect(queue.kinds()).toEqual(['join', 'poll', 'poll']);
  });

  it('before the opening, says the order is drawn at random and counts down to the opening', async () => {
    const opensAt = new Date(Date.now() + 5 * 60_000).toISOString();
    fakeShop({ sale: roomSale({ status: 'upcoming', startsAt: opensAt }) });
    fakeWaitingRoom('7', inOrder(aTicket({ position: undefined, opensAt, waiting: 1234, estimatedWaitSeconds: 400 })));
    renderApp('/sales/7');

    expect(await screen.findByRole('heading', { name: 'You are in the waiting room' })).toBeInTheDocument();
    expect(within(room()).getByText(/The order is drawn at random when the sale opens/)).toBeInTheDocument();
    expect(within(room()).getByText('The sale opens in about 5 minutes')).toBeInTheDocument();
    expect(within(room()).getByText('1,234')).toBeInTheDocument();
    expect(within(room()).getByText('about 7 minutes, the opening included')).toBeInTheDocument();
    expect(screen.queryByRole('progressbar')).not.toBeInTheDocument();
    // The room counts down to the opening: the sale's own "Buy opens when the countdown ends" is not repeated.
    expect(screen.queryByText(/The Buy button opens when the countdown ends/)).not.toBeInTheDocument();
  });

  it('says sold out at once and stops polling until the sale has units again, then goes on', async () => {
    const shop = fakeShop({ sale: roomSale({ remaining: 1 }) });
    let soldOut = false;
    const queue = fakeWaitingRoom('7', (kind) => {
      if (kind === 'join') return aTicket({ position: 4 });
      if (!soldOut) {
        // The last unit went meanwhile: the sale's figures say so from now on.
        soldOut = true;
        Object.assign(shop.sale, { remaining: 0, status: 'sold_out' });
      }
      return shop.sale.remaining > 0 ? aTicket({ position: 2 }) : { state: 'sold_out', pollAfterMs: 100 };
    });
    renderApp('/sales/7');

    expect(await screen.findByRole('heading', { name: 'The line is paused: sold out' })).toBeInTheDocument();
    expect(screen.getByText('Sold out', { selector: 'strong' })).toBeInTheDocument();
    // Once the page's own read of the sale shows no unit, the ticket is left alone.
    await screen.findByText('0', { selector: '.stock__text strong' }, { timeout: 4_000 });
    const polls = queue.calls.length;
    await pause(1_500);
    expect(queue.calls.length).toBe(polls);

    // An unpaid order expired: a unit is back, and the line moves again.
    Object.assign(shop.sale, { remaining: 1, status: 'live' });
    expect(await screen.findByRole('heading', { name: 'You are in the line' }, { timeout: 5_000 })).toBeInTheDocument();
    expect(place()).toBe('2');
  }, 15_000);

  it('says the sale has ended and stops polling', async () => {
    fakeShop({ sale: roomSale() });
    const queue = fakeWaitingRoom('7', inOrder(aTicket({ position: 4 }), { state: 'ended', pollAfterMs: 100 }));
    renderApp('/sales/7');

    expect(await screen.findByText('This sale has ended')).toBeInTheDocument();
    await pause(600);
    expect(queue.kinds()).toEqual(['join', 'poll']);
    expect(screen.queryByRole('button', { name: 'Buy now' })).not.toBeInTheDocument();
  });

  it('joins again when a poll finds no ticket (404: the room lost it)', async () => {
    fakeShop({ sale: roomSale() });
    const queue = fakeWaitingRoom(
      '7',
      inOrder(
        aTicket({ position: 5 }),
        () => HttpResponse.json(errorBody(ErrorCode.NotFound), { status: 404 }),
        aTicket({ position: 9, pollAfterMs: 10_000 }),
      ),
    );
    renderApp('/sales/7');

    await waitFor(() => expect(place()).toBe('9'));
    expect(queue.kinds()).toEqual(['join', 'poll', 'join']);
    expect(screen.queryByRole('alert')).not.toBeInTheDocument();
  });

  it('waits the retry-after of a 429 before polling again, and shows nothing for it', async () => {
    const queue = openRoomRefusingOnePoll(ErrorCode.RateLimited, 429);

    await waitFor(() => expect(place()).toBe('4'), { timeout: 4_000 });
    const [, limited, after] = queue.calls;
    expect(after!.at - limited!.at).toBeGreaterThanOrEqual(950);
    expect(screen.queryByRole('alert')).not.toBeInTheDocument();
  });

  it('backs off after a 503 as its retry-after says, says so, and recovers', async () => {
    const queue = openRoomRefusingOnePoll(ErrorCode.Unavailable, 503);

    expect(await screen.findByText(/briefly unavailable.*Trying again in 1 s/)).toBeInTheDocument();
    await waitFor(() => expect(place()).toBe('4'), { timeout: 4_000 });
    expect(screen.queryByText(/Trying again/)).not.toBeInTheDocument();
    const [, failed, after] = queue.calls;
    expect(after!.at - failed!.at).toBeGreaterThanOrEqual(950);
  });

  it('sends the buyer back to the room when the pass is refused (403 ADMISSION_REQUIRED)', async () => {
    const shop = fakeShop({
      sale: roomSale(),
      tokenAnswer: () => HttpResponse.json(errorBody(ErrorCode.AdmissionRequired), { status: 403 }),
    });
    const queue = fakeWaitingRoom('7', (kind, index) =>
      index === 0 ? anAdmittedTicket('expired-pass') : aTicket({ position: 7, pollAfterMs: 10_000 }),
    );
    const user = userEvent.setup();
    renderApp('/sales/7');

    await user.click(await screen.findByRole('button', { name: 'Buy now' }));

    expect(await screen.findByText('Your time to buy ran out, so you are back in the line.')).toBeInTheDocument();
    await waitFor(() => expect(place()).toBe('7'));
    expect(queue.kinds()).toEqual(['join', 'join']);
    expect(shop.calls.tokenBodies).toEqual([{ pass: 'expired-pass' }]);
    expect(shop.calls.purchases).toEqual([]);
    expect(screen.queryByRole('button', { name: 'Buy now' })).not.toBeInTheDocument();
    expect(screen.queryByRole('alert')).not.toBeInTheDocument();
  });

  it('a sale without a room sells as before: no queue, no pass', async () => {
    const shop = fakeShop();
    const queue = fakeWaitingRoom('7', inOrder(aTicket()));
    const user = userEvent.setup();
    renderApp('/sales/7');

    await user.click(await screen.findByRole('button', { name: 'Buy now' }));
    expect(await screen.findByRole('heading', { name: 'Your order' })).toBeInTheDocument();
    expect(shop.calls.tokenBodies).toEqual([null]);
    expect(queue.calls).toEqual([]);
  });
});
