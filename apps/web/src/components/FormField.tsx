import { type ComponentProps, type ReactNode, useId } from 'react';

/** What a field's control needs to be labelled, described and marked invalid. */
export interface FieldControlProps {
  id: string;
  'aria-invalid': boolean;
  'aria-describedby'?: string;
}

/** A field's own parts: its label, the hint above its control and the error below. */
interface FieldProps {
  /** The control's id; one is made up when the page does not need to know it. */
  id?: string;
  label: string;
  hint?: ReactNode;
  error?: string;
  /** Ids of more text that describes the control, e.g. a warning shown beside the field. */
  describedBy?: string;
}

interface FormFieldProps extends FieldProps {
  children: (control: FieldControlProps) => ReactNode;
}

/**
 * A labelled form control with its hint above and its error below. The control is described by both,
 * so a screen reader reads the error when the control gets focus, and is marked aria-invalid while wrong.
 */
export function FormField({ id, label, hint, error, describedBy, children }: FormFieldProps) {
  const ownId = useId();
  const controlId = id ?? ownId;
  const hintId = hint ? `${controlId}-hint` : undefined;
  const errorId = error ? `${controlId}-error` : undefined;
  const descriptions = [errorId, hintId, describedBy].filter(Boolean).join(' ');
  return (
    <div className="field">
      <label htmlFor={controlId}>{label}</label>
      {hint && (
        <span id={hintId} className="field__hint">
          {hint}
        </span>
      )}
      {children({ id: controlId, 'aria-invalid': Boolean(error), 'aria-describedby': descriptions || undefined })}
      {error && (
        <span id={errorId} className="field__error">
          {error}
        </span>
      )}
    </div>
  );
}

/**
 * A labelled `<input>`: the field's props (label, hint, error) and the input's own — `value` and
 * `onChange`, or react-hook-form's `register(name)`, whose ref reaches the input.
 */
export type InputFieldProps = FieldProps & Omit<ComponentProps<'input'>, 'id'>;

export function InputField({ id, label, hint, error, describedBy, ...input }: InputFieldProps) {
  return (
    <FormField id={id} label={label} hint={hint} error={error} describedBy={describedBy}>
      {(control) => <input className="input" {...control} {...input} />}
    </FormField>
  );
}

/** A whole number from `min` to `max`, with the numeric keypad on a phone. */
export function NumberField(props: InputFieldProps & { min: number; max: number }) {
  return <InputField type="number" inputMode="numeric" step={1} {...props} />;
}

/** A labelled `<select>`, its options as children. */
export function SelectField({
  id,
  label,
  hint,
  error,
  describedBy,
  ...select
}: FieldProps & Omit<ComponentProps<'select'>, 'id'>) {
  return (
    <FormField id={id} label={label} hint={hint} error={error} describedBy={describedBy}>
      {(control) => <select className="select" {...control} {...select} />}
    </FormField>
  );
}
