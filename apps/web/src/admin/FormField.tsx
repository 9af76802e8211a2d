import type { ReactNode } from 'react';

/** What a field's control needs to be labelled, described and marked invalid. */
export interface FieldControlProps {
  id: string;
  'aria-invalid': boolean;
  'aria-describedby'?: string;
}

interface FormFieldProps {
  id: string;
  label: string;
  hint?: ReactNode;
  error?: string;
  /** Ids of more text that describes the control, e.g. a warning shown beside the field. */
  describedBy?: string;
  children: (control: FieldControlProps) => ReactNode;
}

/**
 * A labelled form control with its hint above and its error below. The control is described by both,
 * so a screen reader reads the error when the control gets focus, and is marked aria-invalid while wrong.
 */
export function FormField({ id, label, hint, error, describedBy, children }: FormFieldProps) {
  const hintId = hint ? `${id}-hint` : undefined;
  const errorId = error ? `${id}-error` : undefined;
  const descriptions = [errorId, hintId, describedBy].filter(Boolean).join(' ');
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {hint && (
        <span id={hintId} className="field__hint">
          {hint}
        </span>
      )}
      {children({ id, 'aria-invalid': Boolean(error), 'aria-describedby': descriptions || undefined })}
      {error && (
        <span id={errorId} className="field__error">
          {error}
        </span>
      )}
    </div>
  );
}
