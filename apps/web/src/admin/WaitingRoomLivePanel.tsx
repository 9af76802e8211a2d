import {
  ErrorCode,
  type Sale,
  type WaitingRoomRequest,
  type WaitingRoomSettings,
  type WaitingRoomState,
} from '@flash-sale/contract';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useId, useState } from 'react';
import { isApiError } from '../api/api-error';
import { api, queryKeys } from '../api/endpoints';
import { ErrorNotice } from '../components/ErrorNotice';
import { formatSpan } from '../components/format';
import { NumberField } from '../components/FormField';
import { asAdmin } from './admin-request';
import { waitingRoomFormValues, waitingRoomSchema, WAITING_ROOM_FIELDS } from './sale-form-schema';
import { Stat } from './Stat';
import { DASHBOARD_POLL_MS } from './use-sale-dashboard';
import { ROOM_FIELD_TEXT, type WaitingRoomNumber } from './WaitingRoomFields';

const n = (value: number) => value.toLocaleString('en-US');
/** A rate as the panel shows it: whole when whole or from 10 a second, else one decimal (a measured 0.4/s is not 0). */
const rate = (perSecond: number) =>
  `${Number.isInteger(perSecond) || perSecond >= 10 ? n(Math.round(perSecond)) : perSecond.toFixed(1)}/s`;

/** `GET /api/admin/sales/:id/queue`, polled like the rest of the dashboard. */
function useWaitingRoomState(saleId: string) {
  return useQuery({
    queryKey: queryKeys.waitingRoomState(saleId),
    queryFn: ({ signal }) => asAdmin((token) => api.waitingRoomState(saleId, token, signal)),
    // A sale without a room (removed meanwhile) or without a sale stays so; anything else is polled through.
    refetchInterval: (query) =>
      isApiError(query.state.error, ErrorCode.NoWaitingRoom) || isApiError(query.state.error, ErrorCode.SaleNotFound)
        ? false
        : DASHBOARD_POLL_MS,
  });
}

/**
 * A sale's waiting room, live: who waits, who was let in, who is still shopping, the admission rate as
 * configured and as measured, and how long the line takes to drain; with a form to change the rate and
 * the cap while the sale runs.
 */
export function WaitingRoomLivePanel({ sale, room }: { sale: Sale; room: WaitingRoomSettings }) {
  const headingId = useId();
  const state = useWaitingRoomState(sale.id);
  return (
    <section className="card panel waiting-room-panel" aria-labelledby={headingId}>
      <h2 id={headingId}>Waiting room</h2>
      {state.data && <RoomStats state={state.data} sale={sale} />}
      {state.isPending && <p aria-live="polite">Loading the room…</p>}
      {state.isError && (
        <ErrorNotice
          error={state.error}
          title={
            state.data ? 'Live updates are failing: showing the last sample, retrying.' : 'Could not load the room'
          }
        />
      )}
      <RoomRateForm saleId={sale.id} room={room} />
    </section>
  );
}

/**
 * Why the measured admission rate is below the configured one, when it is: the room counts the places it
 * could fill (over the last few seconds), and the shopper cap and the units left both hold that back.
 */
function heldBackBy(state: WaitingRoomState): string {
  if (state.measuredAdmitPerSecond >= state.admitPerSecond * 0.9) return '';
  if (state.maxShopping !== null && state.shopping >= state.maxShopping) return ' — held back: the shopper cap is full';
  return ' — held back by the units left, or a rate changed in the last seconds';
}

function RoomStats({ state, sale }: { state: WaitingRoomState; sale: Sale }) {
  // A sold-out or ended sale lets nobody more in: whoever still waits is told so at their next poll.
  const closed = sale.status === 'sold_out' || sale.status === 'ended';
  const closedWhy = sale.status === 'ended' ? 'the sale ended' : 'sold out';
  return (
    <dl className="stat-grid admin-stats">
      <Stat
        label="Waiting"
        value={n(state.waiting)}
        detail={closed ? `in the line, told ${closedWhy} at their next poll` : 'in the line'}
      />
      <Stat label="Admitted" value={n(state.admitted)} detail="let out of the line" />
      <Stat
        label="Shopping"
        value={n(state.shopping)}
        detail={state.maxShopping === null ? 'no cap' : `of at most ${n(state.maxShopping)}`}
      />
      <Stat
        label="Admitting"
        value={closed ? '—' : rate(state.measuredAdmitPerSecond)}
        detail={
          closed
            ? `nobody more: ${closedWhy}`
            : `measured; configured ${rate(state.admitPerSecond)}${heldBackBy(state)}`
        }
      />
      <Stat
        label="Drains in"
        value={closed || state.waiting === 0 ? '—' : formatSpan(state.estimatedDrainSeconds)}
        detail={closed ? closedWhy : state.waiting === 0 ? 'nobody waiting' : 'at the measured rate'}
      />
    </dl>
  );
}

type LiveField = Extract<WaitingRoomNumber, 'admitPerSecond' | 'maxShopping'>;

/**
 * The rate and the cap, changed live (`PATCH` with the whole room: the pass length is sent as it is, or
 * the server would put it back to its default). The form keeps what the admin typed; the stats above
 * show the effect.
 */
function RoomRateForm({ saleId, room }: { saleId: string; room: WaitingRoomSettings }) {
  const idPrefix = useId();
  const queryClient = useQueryClient();
  const [values, setValues] = useState(() => {
    const { admitPerSecond, maxShopping } = waitingRoomFormValues(room);
    return { admitPerSecond, maxShopping };
  });
  const [errors, setErrors] = useState<Partial<Record<LiveField, string>>>({});
  const change = useMutation({
    mutationFn: (request: WaitingRoomRequest) =>
      asAdmin((token) => api.updateSale(saleId, { waitingRoom: request }, token)),
    onSuccess: (updated) => {
      queryClient.setQueryData(queryKeys.sale(updated.id), updated);
      void queryClient.invalidateQueries({ queryKey: queryKeys.dashboard(updated.id) });
      void queryClient.invalidateQueries({ queryKey: queryKeys.waitingRoomState(updated.id) });
      void queryClient.invalidateQueries({ queryKey: queryKeys.sales });
    },
  });

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const parsed = waitingRoomSchema.safeParse({ ...values, enabled: true, passSeconds: String(room.passSeconds) });
    if (!parsed.success) {
      const found: Partial<Record<LiveField, string>> = {};
      for (const issue of parsed.error.issues) found[issue.path[0] as LiveField] ??= issue.message;
      change.reset(); // an earlier "Applied" no longer describes the form
      return setErrors(found);
    }
    setErrors({});
    if (parsed.data && !change.isPending) change.mutate(parsed.data);
  };
  const field = (name: LiveField) => (
    <NumberField
      id={`${idPrefix}-${name}`}
      label={ROOM_FIELD_TEXT[name].label}
      hint={name === 'maxShopping' ? 'Empty: no cap' : 'Applies at once'}
      error={errors[name]}
      min={WAITING_ROOM_FIELDS[name].min}
      max={WAITING_ROOM_FIELDS[name].max}
      value={values[name]}
      onChange={(event) => setValues({ ...values, [name]: event.target.value })}
    />
  );
  const applied = change.data?.waitingRoom;

  return (
    <>
      <form className="room-rate-form" noValidate onSubmit={submit} aria-label="Change the room live">
        {field('admitPerSecond')}
        {field('maxShopping')}
        <button type="submit" className="button" disabled={change.isPending}>
          {change.isPending ? 'Applying…' : 'Apply'}
        </button>
      </form>
      <div role="status">
        {change.isSuccess && applied && (
          <p className="notice notice--success">
            Applied: admitting {n(applied.admitPerSecond)} per second,{' '}
            {applied.maxShopping === undefined ? 'no cap on shoppers' : `at most ${n(applied.maxShopping)} shopping`}.
          </p>
        )}
      </div>
      {change.isError && <ErrorNotice error={change.error} title="The room was not changed" />}
    </>
  );
}
