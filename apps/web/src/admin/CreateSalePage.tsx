import { type CreateSaleRequest, SALE_STRATEGIES, type SaleStrategy, UNSAFE_STRATEGIES } from '@flash-sale/contract';
import { zodResolver } from '@hookform/resolvers/zod';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { useForm, useWatch } from 'react-hook-form';
import { Link, useNavigate } from 'react-router';
import { api, queryKeys } from '../api/endpoints';
import { ErrorNotice } from '../components/ErrorNotice';
import { asAdmin } from './admin-request';
import { FormField, InputField, NumberField, SelectField } from '../components/FormField';
import { defaultSaleFormValues, saleFormSchema, type SaleFormValues, WHOLE_NUMBER_FIELDS } from './sale-form-schema';
import { WaitingRoomFields } from './WaitingRoomFields';

/** How each strategy sells (docs/architecture.md "Strategies"), as the select's options and the hint beneath it. */
const STRATEGIES: Record<SaleStrategy, { label: string; description: string }> = {
  'redis-lua': {
    label: 'redis-lua (recommended)',
    description:
      'Reserves each unit atomically in Redis with a Lua script; orders reach MySQL through a queue. Fastest, never oversells.',
  },
  'db-optimistic': {
    label: 'db-optimistic',
    description: 'MySQL only: each purchase writes on condition of the row’s version and retries on a conflict.',
  },
  'db-segmented': {
    label: 'db-segmented',
    description:
      'MySQL only: the stock is split into segment rows; each buyer takes from their own segment on condition of its version, so far fewer conflicts than one row.',
  },
  'db-pessimistic': {
    label: 'db-pessimistic',
    description:
      'MySQL only: each purchase locks the sale row (SELECT … FOR UPDATE). Correct, but buyers wait in line.',
  },
  'redis-lock': {
    label: 'redis-lock',
    description:
      'A per-sale lock in Redis around read, check and write in MySQL; a fencing token lets MySQL refuse a holder whose lock ran out.',
  },
  'redis-lock-unfenced': {
    label: 'redis-lock-unfenced (UNSAFE)',
    description: 'The same Redis lock, trusted without a fencing token.',
  },
  'naive-unsafe': {
    label: 'naive-unsafe (UNSAFE)',
    description: 'MySQL only: reads the stock and writes it back with no lock or condition.',
  },
};

/** Why an unsafe strategy oversells, in the warning shown when it is chosen. */
const UNSAFE_WARNING: Partial<Record<SaleStrategy, string>> = {
  'naive-unsafe':
    'Concurrent buyers read the same stock and all succeed, so it sells more units than it has. It exists only to demonstrate that problem — never use it for a real sale.',
  'redis-lock-unfenced':
    'A lock holder paused longer than the lock lives (a GC pause, a slow network) writes its stale stock over the sales made meanwhile, so units are sold twice. It exists only to demonstrate that problem — never use it for a real sale.',
};

type WholeNumberField = keyof typeof WHOLE_NUMBER_FIELDS;

/** A whole-number field's bounds as its hint says them, e.g. "1–10,000,000". */
const range = (name: WholeNumberField) =>
  `${WHOLE_NUMBER_FIELDS[name].min.toLocaleString('en-US')}–${WHOLE_NUMBER_FIELDS[name].max.toLocaleString('en-US')}`;

/**
 * `POST /api/admin/sales` as a form. The schema (sale-form-schema.ts) checks the API's limits before
 * anything is sent; on submit, focus goes to the first field in error (react-hook-form's default).
 */
export function CreateSalePage() {
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const idPrefix = useId();
  const fieldId = (name: keyof SaleFormValues) => `${idPrefix}-${name}`;
  const unsafeWarningId = `${idPrefix}-unsafe-warning`;
  // Read once: the defaults are relative to when the form opened, not to each render.
  const [defaultValues] = useState(() => defaultSaleFormValues(new Date()));
  const {
    register,
    handleSubmit,
    control,
    formState: { errors },
  } = useForm<SaleFormValues, unknown, CreateSaleRequest>({ resolver: zodResolver(saleFormSchema), defaultValues });
  const strategy = useWatch({ control, name: 'strategy' });
  const roomEnabled = useWatch({ control, name: 'waitingRoom.enabled' });
  const roomErrors = errors.waitingRoom;
  /** A field's id, error and react-hook-form registration, for an InputField. */
  const field = (name: keyof SaleFormValues) => ({
    id: fieldId(name),
    error: errors[name]?.message,
    ...register(name),
  });
  const numberField = (name: WholeNumberField) => ({
    ...field(name),
    min: WHOLE_NUMBER_FIELDS[name].min,
    max: WHOLE_NUMBER_FIELDS[name].max,
  });
  const timeZone = Intl.DateTimeFormat().resolvedOptions().timeZone;

  const create = useMutation({
    mutationFn: (input: CreateSaleRequest) => asAdmin((token) => api.createSale(input, token)),
    onSuccess: (sale) => {
      void queryClient.invalidateQueries({ queryKey: queryKeys.sales });
      void navigate(`/admin/sales/${encodeURIComponent(sale.id)}`);
    },
  });
  const submit = handleSubmit((input) => {
    if (!create.isPending) create.mutate(input);
  });

  return (
    <>
      <div className="page-header">
        <div>
          <h1>New sale</h1>
          <p>Set up the product, its stock and its window. Its stock is ready to sell as soon as it is created.</p>
        </div>
      </div>
      <form className="form admin-form card panel" noValidate onSubmit={(event) => void submit(event)}>
        <fieldset className="admin-fieldset">
          <legend>Product</legend>
          <InputField {...field('name')} label="Name" autoComplete="off" />
          <FormField
            id={fieldId('description')}
            label="Description"
            hint="Optional. Shown on the sale’s page."
            error={errors.description?.message}
          >
            {(control) => <textarea className="textarea" rows={3} {...control} {...register('description')} />}
          </FormField>
          <InputField
            {...field('imageUrl')}
            label="Image URL"
            hint="Optional. An http:// or https:// address of a picture."
            type="url"
            inputMode="url"
            placeholder="https://…"
          />
        </fieldset>

        <fieldset className="admin-fieldset">
          <legend>Price and stock</legend>
          <div className="form-grid admin-form-grid--3">
            <InputField
              {...field('price')}
              label="Price (USD)"
              hint="Per unit, e.g. 49.99"
              inputMode="decimal"
              autoComplete="off"
            />
            <NumberField {...numberField('stock')} label="Stock" hint={`Units, ${range('stock')}`} />
            <NumberField
              {...numberField('perUserLimit')}
              label="Per-user limit"
              hint={`Units per customer, ${range('perUserLimit')}`}
            />
          </div>
        </fieldset>

        <fieldset className="admin-fieldset">
          <legend>Schedule</legend>
          <p className="field__hint">Your local time ({timeZone}); the server stores it in UTC.</p>
          <div className="form-grid">
            <InputField
              {...field('startsAt')}
              label="Starts at"
              hint="Now by default: the sale opens as soon as it is created"
              type="datetime-local"
            />
            <InputField {...field('endsAt')} label="Ends at" type="datetime-local" />
          </div>
        </fieldset>

        <fieldset className="admin-fieldset">
          <legend>Selling</legend>
          <SelectField
            {...field('strategy')}
            label="Strategy"
            hint={STRATEGIES[strategy].description}
            describedBy={UNSAFE_STRATEGIES.includes(strategy) ? unsafeWarningId : undefined}
          >
            {SALE_STRATEGIES.map((value) => (
              <option key={value} value={value}>
                {STRATEGIES[value].label}
              </option>
            ))}
          </SelectField>
          <div aria-live="polite">
            {UNSAFE_STRATEGIES.includes(strategy) && (
              <div id={unsafeWarningId} className="notice notice--warning">
                <strong className="notice__title">⚠ {strategy} oversells</strong>
                <p>{UNSAFE_WARNING[strategy]}</p>
              </div>
            )}
          </div>
          <NumberField
            {...numberField('paymentTimeoutSeconds')}
            label="Payment timeout (seconds)"
            hint={`How long a buyer has to pay before the order expires and its units return to stock, ${range('paymentTimeoutSeconds')}.`}
          />
          {strategy === 'redis-lua' && (
            <NumberField
              {...numberField('buckets')}
              label="Buckets"
              hint={`For a hot sale on Redis Cluster: the stock is spread over this many hash slots (each buyer stays in one), ${range('buckets')}. Keep 1 on a single Redis.`}
            />
          )}
        </fieldset>

        <WaitingRoomFields
          idPrefix={idPrefix}
          enabled={roomEnabled}
          inputs={{
            enabled: register('waitingRoom.enabled'),
            admitPerSecond: register('waitingRoom.admitPerSecond'),
            maxShopping: register('waitingRoom.maxShopping'),
            passSeconds: register('waitingRoom.passSeconds'),
          }}
          errors={{
            admitPerSecond: roomErrors?.admitPerSecond?.message,
            maxShopping: roomErrors?.maxShopping?.message,
            passSeconds: roomErrors?.passSeconds?.message,
          }}
        />

        {create.isError && <ErrorNotice error={create.error} title="The sale was not created" />}
        <div className="button-row">
          <button type="submit" className="button" disabled={create.isPending}>
            {create.isPending ? 'Creating…' : 'Create sale'}
          </button>
          <Link to="/admin" className="button button--secondary">
            Cancel
          </Link>
        </div>
      </form>
    </>
  );
}
