import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type ChangeEvent, type FormEvent, useId, useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { api, queryKeys } from '../api/endpoints';
import {
  type Sale,
  SALE_LIMITS,
  type UpdateSaleRequest,
  WAITING_ROOM_DEFAULTS,
  type WaitingRoomRequest,
  type WaitingRoomSettings,
} from '@flash-sale/contract';
import { ErrorNotice, QueryProgress } from '../components/ErrorNotice';
import { FormField, InputField } from '../components/FormField';
import { asAdmin } from './admin-request';
import { type WaitingRoomFormValues, waitingRoomFormValues, waitingRoomSchema } from './sale-form-schema';
import { type WaitingRoomNumber, WaitingRoomFields } from './WaitingRoomFields';

/** A `datetime-local` value (browser-local time, minutes) for an ISO instant, and back. */
function toLocalInput(iso: string): string {
  const date = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

/** Whether the room in the form is the one the sale has (then a Save does not send it). */
function sameRoom(room: WaitingRoomRequest | null, saved: WaitingRoomSettings | null): boolean {
  if (room === null || saved === null) return room === saved;
  return (
    room.admitPerSecond === saved.admitPerSecond &&
    room.maxShopping === saved.maxShopping &&
    (room.passSeconds ?? WAITING_ROOM_DEFAULTS.passSeconds) === saved.passSeconds
  );
}

/** Ends a sale now: `endsAt` = now, after which the API refuses purchases as SALE_ENDED. */
export function useEndSaleNow() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (saleId: string) =>
      asAdmin((token) => api.updateSale(saleId, { endsAt: new Date().toISOString() }, token)),
    onSuccess: (sale) => {
      queryClient.setQueryData(queryKeys.sale(sale.id), sale);
      void queryClient.invalidateQueries({ queryKey: queryKeys.sales });
      void queryClient.invalidateQueries({ queryKey: queryKeys.dashboard(sale.id) });
    },
  });
}

/**
 * Name, description, picture, end and waiting room of a sale (docs/api.md, `PATCH /api/admin/sales/:id`);
 * stock is not editable.
 */
export function EditSalePage() {
  const { saleId = '' } = useParams();
  const sale = useQuery({ queryKey: queryKeys.sale(saleId), queryFn: ({ signal }) => api.getSale(saleId, signal) });
  if (!sale.isSuccess)
    return <QueryProgress query={sale} loading="Loading the sale…" failed="Could not load the sale" />;
  return <EditSaleForm key={sale.data.id} sale={sale.data} />;
}

function EditSaleForm({ sale }: { sale: Sale }) {
  const [name, setName] = useState(sale.name);
  const [description, setDescription] = useState(sale.description ?? '');
  const [imageUrl, setImageUrl] = useState(sale.imageUrl ?? '');
  const savedEnd = toLocalInput(sale.endsAt);
  // The end time follows the sale until the admin types one (null until then): "End sale now" moves
  // it, and a Save of the other fields must not send the old end back, which would re-open the sale.
  const [typedEnd, setTypedEnd] = useState<string | null>(null);
  const endsAt = typedEnd ?? savedEnd;
  const [room, setRoom] = useState(() => waitingRoomFormValues(sale.waitingRoom));
  const [roomErrors, setRoomErrors] = useState<Partial<Record<WaitingRoomNumber, string>>>({});
  const roomId = useId();
  const confirmId = useId();
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const dashboard = `/admin/sales/${encodeURIComponent(sale.id)}`;
  const save = useMutation({
    mutationFn: (input: UpdateSaleRequest) => asAdmin((token) => api.updateSale(sale.id, input, token)),
    onSuccess: (updated) => {
      queryClient.setQueryData(queryKeys.sale(updated.id), updated);
      void queryClient.invalidateQueries({ queryKey: queryKeys.sales });
      void queryClient.invalidateQueries({ queryKey: queryKeys.dashboard(updated.id) });
      void navigate(dashboard);
    },
  });
  const endNow = useEndSaleNow();
  const [confirmingEnd, setConfirmingEnd] = useState(false);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const parsedRoom = waitingRoomSchema.safeParse(room);
    if (!parsedRoom.success) {
      const errors: Partial<Record<WaitingRoomNumber, string>> = {};
      for (const issue of parsedRoom.error.issues) errors[issue.path[0] as WaitingRoomNumber] ??= issue.message;
      return setRoomErrors(errors);
    }
    setRoomErrors({});
    const input: UpdateSaleRequest = { name: name.trim(), description, imageUrl: imageUrl.trim() };
    const end = new Date(endsAt);
    if (typedEnd !== null && !Number.isNaN(end.getTime()) && typedEnd !== savedEnd) input.endsAt = end.toISOString();
    // Sent only when changed: a Save of the other fields leaves a room a dashboard may be changing live alone.
    if (!sameRoom(parsedRoom.data, sale.waitingRoom)) input.waitingRoom = parsedRoom.data;
    save.mutate(input);
  };
  const roomInput = (name: Exclude<keyof WaitingRoomFormValues, 'enabled'>) => ({
    value: room[name],
    onChange: (event: ChangeEvent<HTMLInputElement>) => setRoom({ ...room, [name]: event.target.value }),
  });
  const ended = sale.status === 'ended';

  return (
    <>
      <div className="page-header">
        <div>
          <p className="admin-small">
            <Link to={dashboard}>← Dashboard</Link>
          </p>
          <h1>Edit “{sale.name}”</h1>
          <p>Stock cannot change after creation: every unit is accounted for by the books.</p>
        </div>
        {!confirmingEnd && (
          <button
            type="button"
            className="button button--danger"
            onClick={() => setConfirmingEnd(true)}
            disabled={ended || endNow.isPending}
          >
            {ended ? 'Ended' : endNow.isPending ? 'Ending…' : 'End sale now'}
          </button>
        )}
      </div>
      {confirmingEnd && (
        <div className="notice notice--warning" role="alertdialog" aria-labelledby={confirmId}>
          <p id={confirmId}>
            End “{sale.name}” now? Every purchase is refused from this moment; orders already taken stay.
          </p>
          <div className="button-row">
            <button
              type="button"
              className="button button--danger"
              onClick={() => {
                setConfirmingEnd(false);
                endNow.mutate(sale.id);
              }}
            >
              Yes, end it now
            </button>
            <button type="button" className="button button--secondary" onClick={() => setConfirmingEnd(false)}>
              Keep selling
            </button>
          </div>
        </div>
      )}
      {endNow.isError && <ErrorNotice error={endNow.error} title="Could not end the sale" />}
      {endNow.isSuccess && (
        <p className="notice notice--info" role="status">
          The sale has ended: purchases are refused from now on.
        </p>
      )}
      <form className="card panel form" onSubmit={submit}>
        <InputField
          label="Name"
          value={name}
          maxLength={SALE_LIMITS.maxNameLength}
          required
          onChange={(e) => setName(e.target.value)}
        />
        <FormField label="Description">
          {(control) => (
            <textarea
              className="input"
              rows={3}
              maxLength={SALE_LIMITS.maxDescriptionLength}
              value={description}
              onChange={(e) => setDescription(e.target.value)}
              {...control}
            />
          )}
        </FormField>
        <InputField
          label="Image URL"
          type="url"
          maxLength={SALE_LIMITS.maxImageUrlLength}
          value={imageUrl}
          onChange={(e) => setImageUrl(e.target.value)}
        />
        <InputField
          label="Ends at"
          hint={ended ? 'The sale has ended. A later end time opens it again.' : undefined}
          type="datetime-local"
          value={endsAt}
          onChange={(e) => setTypedEnd(e.target.value)}
        />
        <WaitingRoomFields
          idPrefix={roomId}
          enabled={room.enabled}
          inputs={{
            enabled: {
              checked: room.enabled,
              onChange: (event) => setRoom({ ...room, enabled: event.target.checked }),
            },
            admitPerSecond: roomInput('admitPerSecond'),
            maxShopping: roomInput('maxShopping'),
            passSeconds: roomInput('passSeconds'),
          }}
          errors={roomErrors}
          note={
            sale.waitingRoom &&
            !room.enabled && (
              <p className="notice notice--warning">
                Saving removes the waiting room: every buyer waiting in it may buy at once.
              </p>
            )
          }
        />
        {save.isError && <ErrorNotice error={save.error} title="Could not save" />}
        <button type="submit" className="button" disabled={save.isPending || !name.trim()}>
          {save.isPending ? 'Saving…' : 'Save changes'}
        </button>
      </form>
    </>
  );
}
