import {
  type CreateSaleRequest,
  SALE_STRATEGIES,
  SALE_STRATEGY_TRAITS,
  sellsFromRedis,
  UNSAFE_STRATEGIES,
} from '@flash-sale/contract';
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
            hint={SALE_STRATEGY_TRAITS[strategy].description}
            describedBy={UNSAFE_STRATEGIES.includes(strategy) ? unsafeWarningId : undefined}
          >
            {SALE_STRATEGIES.map((value) => (
              <option key={value} value={value}>
                {SALE_STRATEGY_TRAITS[value].label}
              </option>
            ))}
          </SelectField>
          <div aria-live="polite">
            {UNSAFE_STRATEGIES.includes(strategy) && (
              <div id={unsafeWarningId} className="notice notice--warning">
                <strong className="notice__title">⚠ {strategy} oversells</strong>
                <p>{SALE_STRATEGY_TRAITS[strategy].unsafeWarning}</p>
              </div>
            )}
          </div>
          <NumberField
            {...numberField('paymentTimeoutSeconds')}
            label="Payment timeout (seconds)"
            hint={`How long a buyer has to pay before the order expires and its units return to stock, ${range('paymentTimeoutSeconds')}.`}
          />
          {sellsFromRedis(strategy) && (
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
