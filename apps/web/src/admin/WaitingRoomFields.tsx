import type { ComponentProps, ReactNode } from 'react';
import { NumberField } from '../components/FormField';
import { WAITING_ROOM_FIELDS, type WaitingRoomFormValues } from './sale-form-schema';

export type WaitingRoomNumber = Exclude<keyof WaitingRoomFormValues, 'enabled'>;

/** A room field's bounds as its hint says them, e.g. "1–100,000". */
export const roomRange = (name: WaitingRoomNumber) =>
  `${WAITING_ROOM_FIELDS[name].min.toLocaleString('en-US')}–${WAITING_ROOM_FIELDS[name].max.toLocaleString('en-US')}`;

/** The room's number fields, labelled and hinted the same wherever they show. */
export const ROOM_FIELD_TEXT: Record<WaitingRoomNumber, { label: string; hint: string }> = {
  admitPerSecond: {
    label: 'Admit per second',
    hint: `Buyers let out of the line each second, ${roomRange('admitPerSecond')}`,
  },
  maxShopping: {
    label: 'Max shopping',
    hint: `Optional: admitted buyers still shopping at once, ${roomRange('maxShopping')}. Empty: no cap.`,
  },
  passSeconds: {
    label: 'Pass (seconds)',
    hint: `How long an admitted buyer has to buy, ${roomRange('passSeconds')}`,
  },
};

type InputProps = Omit<ComponentProps<'input'>, 'id' | 'min' | 'max'>;

interface WaitingRoomFieldsProps {
  idPrefix: string;
  enabled: boolean;
  /** Each input's own props: react-hook-form's `register(name)`, or a value (`checked`) and onChange. */
  inputs: Record<keyof WaitingRoomFormValues, InputProps>;
  errors: Partial<Record<WaitingRoomNumber, string>>;
  /** Said under the switch, e.g. what switching a sale's room off does. */
  note?: ReactNode;
}

/** The waiting room of the create and edit forms: a switch, then its three numbers while it is on. */
export function WaitingRoomFields({ idPrefix, enabled, inputs, errors, note }: WaitingRoomFieldsProps) {
  const switchId = `${idPrefix}-room`;
  const numberField = (name: WaitingRoomNumber) => (
    <NumberField
      id={`${idPrefix}-room-${name}`}
      label={ROOM_FIELD_TEXT[name].label}
      hint={ROOM_FIELD_TEXT[name].hint}
      error={errors[name]}
      min={WAITING_ROOM_FIELDS[name].min}
      max={WAITING_ROOM_FIELDS[name].max}
      {...inputs[name]}
    />
  );
  return (
    <fieldset className="admin-fieldset">
      <legend>Waiting room</legend>
      <div className="field">
        <label htmlFor={switchId}>
          <input id={switchId} type="checkbox" aria-describedby={`${switchId}-hint`} {...inputs.enabled} /> Put buyers
          in a waiting room
        </label>
        <p id={`${switchId}-hint`} className="field__hint">
          Buyers join a line and are let out of it at a steady rate; only those let out may buy. For a crowd that would
          otherwise arrive all at once.
        </p>
      </div>
      {note}
      {enabled && (
        <div className="form-grid admin-form-grid--3">
          {numberField('admitPerSecond')}
          {numberField('maxShopping')}
          {numberField('passSeconds')}
        </div>
      )}
    </fieldset>
  );
}
