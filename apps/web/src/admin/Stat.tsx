import type { ReactNode } from 'react';

export interface StatProps {
  label: string;
  value: string;
  detail?: ReactNode;
  /** Draws the eye: a number that should be zero is not. */
  alert?: boolean;
}

/** One figure of a dashboard's stat grid: its label, its value and a line of detail. */
export function Stat({ label, value, detail, alert = false }: StatProps) {
  return (
    <div className={`card stat${alert ? ' stat--alert' : ''}`}>
      <dt className="stat__label">{label}</dt>
      <dd className="stat__value">{value}</dd>
      {detail && <dd className="stat__detail">{detail}</dd>}
    </div>
  );
}
