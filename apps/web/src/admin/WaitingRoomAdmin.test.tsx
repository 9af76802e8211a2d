import type {
  CreateSaleRequest,
  Sale,
  UpdateSaleRequest,
  WaitingRoomSettings,
  WaitingRoomState,
} from '@flash-sale/contract';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { http, HttpResponse } from 'msw';
import { renderApp } from '../test/render';
import { recordPosts, server } from '../test/server';
import { errorBody, makeDashboard, makeRoomState, makeSale } from './test-fixtures';

const ROOM: WaitingRoomSettings = { admitPerSecond: 50, maxShopping: 200, passSeconds: 60 };

/** The sale's reads (storefront route, dashboard, room) and its PATCH, which records each body and answers `respond`. */
function saleEndpoints(
  sale: Sale,
  respond?: (body: UpdateSaleRequest) => Response,
  roomState: Partial<WaitingRoomState> = {},
) {
  const patches: UpdateSaleRequest[] = [];
  let current = sale;
  server.use(
    http.get(`/api/sales/${sale.id}`, () => HttpResponse.json(current)),
    http.get(`/api/admin/sales/${sale.id}/dashboard`, () => HttpResponse.json(makeDashboard({ sale: current }))),
    http.get(`/api/admin/sales/${sale.id}/queue`, () => HttpResponse.json(makeRoomState(roomState))),
    http.patch(`/api/admin/sales/${sale.id}`, async ({ request }) => {
      const body = (await request.json()) as UpdateSaleRequest;
      patches.push(body);
      if (respond) return respond(body);
      const { waitingRoom, ...rest } = body;
      current = { ...current, ...rest };
      if (waitingRoom !== undefined) {
        current.waitingRoom = waitingRoom && { passSeconds: 120, ...waitingRoom };
      }
      return HttpResponse.json(current);
    }),
  );
  return patches;
}

/** Opens the sale's dashboard as an admin, once its waiting-room panel is there. */
async function openRoomPanel() {
  renderApp('/admin/sales/s-1', { adminToken: 'admin-jwt' });
  await screen.findByRole('region', { name: 'Waiting room' });
}

/** The value of a stat tile of the room panel: <dt>label</dt><dd>value</dd><dd>detail</dd>. */
function roomStat(label: string) {
  const panel = screen.getByRole('region', { name: 'Waiting room' });
  const term = within(panel).getByText(label, { selector: 'dt' });
  return {
    value: term.nextElementSibling?.textContent,
    detail: term.nextElementSibling?.nextElementSibling?.textContent,
  };
}

describe('the waiting room in the admin console', () => {
  it('the create form shows the room fields only when asked, checks them, then sends the room', async () => {
    const created = makeSale({ id: 's-42', waitingRoom: { admitPerSecond: 80, maxShopping: 300, passSeconds: 90 } });
    const endpoint = recordPosts<CreateSaleRequest>('/api/admin/sales', () =>
      HttpResponse.json(created, { status: 201 }),
    );
    server.use(endpoint.handler);
    saleEndpoints(created);
    const user = userEvent.setup();
    renderApp('/admin/sales/new', { adminToken: 'admin-jwt' });

    await user.type(await screen.findByLabelText('Name'), 'Queued drop');
    await user.type(screen.getByLabelText('Price (USD)'), '10');
    expect(screen.queryByLabelText('Admit per second')).not.toBeInTheDocument();
    await user.click(screen.getByRole('checkbox', { name: 'Put buyers in a waiting room' }));
    expect(screen.getByLabelText('Admit per second')).toHaveValue(50);
    expect(screen.getByLabelText('Pass (seconds)')).toHaveValue(120);

    await user.clear(screen.getByLabelText('Admit per second'));
    await user.type(screen.getByLabelText('Admit per second'), '0');
    await user.type(screen.getByLabelText('Max shopping'), '0');
    await user.clear(screen.getByLabelText('Pass (seconds)'));
    await user.type(screen.getByLabelText('Pass (seconds)'), '3601');
    await user.click(screen.getByRole('button', { name: 'Create sale' }));

    expect(screen.getByLabelText('Admit per second')).toHaveAccessibleDescription(/^At least 1/);
    expect(screen.getByLabelText('Admit per second')).toHaveFocus();
    expect(screen.getByLabelText('Max shopping')).toHaveAccessibleDescription(/^At least 1/);
    expect(screen.getByLabelText('Pass (seconds)')).toHaveAccessibleDescription(/^At most 3,600/);
    expect(endpoint.sent).toEqual([]);

    await user.clear(screen.getByLabelText('Admit per second'));
    await user.type(screen.getByLabelText('Admit per second'), '80');
    await user.clear(screen.getByLabelText('Max shopping'));
    await user.type(screen.getByLabelText('Max shopping'), '300');
    await user.clear(screen.getByLabelText('Pass (seconds)'));
    await user.type(screen.getByLabelText('Pass (seconds)'), '90');
    await user.click(screen.getByRole('button', { name: 'Create sale' }));

    await waitFor(() => expect(endpoint.sent).toHaveLength(1));
    expect(endpoint.sent[0]?.waitingRoom).toEqual({ admitPerSecond: 80, maxShopping: 300, passSeconds: 90 });
    expect(await screen.findByText('Waiting room', { selector: '.badge' })).toBeInTheDocument();
  });

  it('the edit form leaves the room alone on a Save of other fields, and removes it when switched off', async () => {
    const patches = saleEndpoints(makeSale({ waitingRoom: ROOM }));
    const user = userEvent.setup();
    renderApp('/admin/sales/s-1/edit', { adminToken: 'admin-jwt' });

    const roomSwitch = await screen.findByRole('checkbox', { name: 'Put buyers in a waiting room' });
    expect(roomSwitch).toBeChecked();
    expect(screen.getByLabelText('Max shopping')).toHaveValue(200);
    await user.click(screen.getByRole('button', { name: 'Save changes' }));
    await waitFor(() => expect(patches).toHaveLength(1));
    expect(patches[0]).not.toHaveProperty('waitingRoom');

    await user.click(await screen.findByRole('link', { name: 'Edit' }));
    await user.click(await screen.findByRole('checkbox', { name: 'Put buyers in a waiting room' }));
    expect(screen.getByText(/Saving removes the waiting room/)).toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Save changes' }));
    await waitFor(() => expect(patches).toHaveLength(2));
    expect(patches[1]).toMatchObject({ waitingRoom: null });
    // Back on the dashboard: no room, no room panel.
    await screen.findByRole('heading', { name: 'Trail sneakers', level: 1 });
    await waitFor(() => expect(screen.queryByRole('region', { name: 'Waiting room' })).not.toBeInTheDocument());
  });

  it('the edit form checks a changed room and sends it whole', async () => {
    const patches = saleEndpoints(makeSale({ waitingRoom: ROOM }));
    const user = userEvent.setup();
    renderApp('/admin/sales/s-1/edit', { adminToken: 'admin-jwt' });

    // Out of bounds, the browser's own check of the number field stops the Save; left empty (which it
    // lets through), the form's check says what is missing.
    const rate = await screen.findByLabelText('Admit per second');
    await user.clear(rate);
    await user.type(rate, '100001');
    await user.click(screen.getByRole('button', { name: 'Save changes' }));
    expect(rate).toBeInvalid();
    await user.clear(rate);
    await user.click(screen.getByRole('button', { name: 'Save changes' }));
    expect(rate).toHaveAccessibleDescription(/^Enter how many buyers to admit per second/);
    expect(patches).toEqual([]);

    await user.clear(rate);
    await user.type(rate, '75');
    await user.clear(screen.getByLabelText('Max shopping'));
    await user.click(screen.getByRole('button', { name: 'Save changes' }));
    await waitFor(() => expect(patches).toHaveLength(1));
    expect(patches[0]?.waitingRoom).toEqual({ admitPerSecond: 75, passSeconds: 60 });
    expect(await screen.findByRole('heading', { name: 'Trail sneakers', level: 1 })).toBeInTheDocument();
  });

  it('the dashboard shows the room live: waiting, admitted, shopping, both rates and the drain time', async () => {
    saleEndpoints(makeSale({ waitingRoom: ROOM }));
    await openRoomPanel();
    await waitFor(() => expect(roomStat('Waiting').value).toBe('1,200'));
    expect(roomStat('Admitted').value).toBe('640');
    expect(roomStat('Shopping')).toEqual({ value: '180', detail: 'of at most 200' });
    expect(roomStat('Admitting')).toEqual({ value: '49/s', detail: 'measured; configured 50/s' });
    expect(roomStat('Drains in').value).toBe('25 seconds');
  });

  it('says why the measured rate is below the configured one', async () => {
    saleEndpoints(makeSale({ waitingRoom: ROOM }), undefined, { measuredAdmitPerSecond: 0.4, shopping: 200 });
    await openRoomPanel();
    await waitFor(() =>
      expect(roomStat('Admitting')).toEqual({
        value: '0.4/s',
        detail: 'measured; configured 50/s — held back: the shopper cap is full',
      }),
    );
  });

  it('a sold-out room says so: nobody more is let in, those still in the line are told at their next poll', async () => {
    saleEndpoints(makeSale({ waitingRoom: ROOM, status: 'sold_out', remaining: 0 }), undefined, {
      waiting: 106,
      estimatedDrainSeconds: 0,
    });
    await openRoomPanel();
    await waitFor(() =>
      expect(roomStat('Waiting')).toEqual({
        value: '106',
        detail: 'in the line, told sold out at their next poll',
      }),
    );
    expect(roomStat('Admitting')).toEqual({ value: '—', detail: 'nobody more: sold out' });
    expect(roomStat('Drains in')).toEqual({ value: '—', detail: 'sold out' });
  });

  it('the dashboard changes the rate and the cap live, keeping the pass length, and says so', async () => {
    const patches = saleEndpoints(makeSale({ waitingRoom: ROOM }));
    const user = userEvent.setup();
    renderApp('/admin/sales/s-1', { adminToken: 'admin-jwt' });

    const form = await screen.findByRole('form', { name: 'Change the room live' });
    const rate = within(form).getByLabelText('Admit per second');
    expect(rate).toHaveValue(50);
    await user.clear(rate);
    await user.type(rate, '0');
    await user.click(within(form).getByRole('button', { name: 'Apply' }));
    expect(rate).toHaveAccessibleDescription(/^At least 1/);
    expect(patches).toEqual([]);

    await user.clear(rate);
    await user.type(rate, '120');
    await user.clear(within(form).getByLabelText('Max shopping'));
    await user.type(within(form).getByLabelText('Max shopping'), '500');
    await user.click(within(form).getByRole('button', { name: 'Apply' }));

    expect(await screen.findByText('Applied: admitting 120 per second, at most 500 shopping.')).toBeInTheDocument();
    expect(patches).toEqual([{ waitingRoom: { admitPerSecond: 120, maxShopping: 500, passSeconds: 60 } }]);
  });

  it("the dashboard's live change shows the server's refusal", async () => {
    saleEndpoints(makeSale({ waitingRoom: ROOM }), () =>
      HttpResponse.json(errorBody('VALIDATION_FAILED', 'waitingRoom.admitPerSecond is wrong'), { status: 400 }),
    );
    const user = userEvent.setup();
    renderApp('/admin/sales/s-1', { adminToken: 'admin-jwt' });

    const form = await screen.findByRole('form', { name: 'Change the room live' });
    await user.click(within(form).getByRole('button', { name: 'Apply' }));

    const alert = await screen.findByRole('alert');
    expect(alert).toHaveTextContent('The room was not changed');
    expect(alert).toHaveTextContent('waitingRoom.admitPerSecond is wrong');
    expect(screen.queryByText(/^Applied:/)).not.toBeInTheDocument();
  });
});
